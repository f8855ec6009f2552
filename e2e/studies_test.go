package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestPublishedSection: a spec with a published: block (as every study under studies/ has)
// runs, and its report, from the binary, sets each effect beside this host's estimate with a
// verdict, in the terminal and in JSON; an effect on a skipped cell says it was not run here.
func TestPublishedSection(t *testing.T) {
	parallel(t)
	testenv.NeedCommands(t, "redis-server")
	e := newEnv(t, spec{Name: "published", Records: 2000,
		Workload: "{type: ycsb, mix: read-heavy, threads: 2, duration: 1s, warmup: 1s}",
		Matrix:   "  platform: [native]\n  storage: [bind, tmpfs, overlay]",
		Extra: "baseline: {platform: native, storage: bind}\nstorageOptions: {tmpfs: {size: 256MiB}}\n" +
			"published:\n  study: a study of storage\n  effects:\n" +
			"    - {name: tmpfs, cells: {storage: tmpfs}, direction: faster, source: Fig. 1}\n" +
			"    - {name: layer, cells: {storage: overlay}, direction: slower, overhead: 20, source: Table 2}\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, _ := e.run(ctx, t, "-q")
	text := e.report(ctx, t, out, "")
	if !bytes.Contains(text, []byte("published vs this host")) || !bytes.Contains(text, []byte("a study of storage")) {
		t.Errorf("no published section in the report:\n%s", text)
	}
	var doc struct {
		Published struct {
			Rows []struct {
				Effect, Verdict, Why string
				Estimate             *struct {
					N int `json:"n"`
				}
			}
		}
	}
	b := e.report(ctx, t, out, "json")
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("report json: %v\n%s", err, b)
	}
	rows := doc.Published.Rows
	if len(rows) != 2 || rows[0].Effect != "tmpfs" || rows[0].Estimate == nil || rows[0].Estimate.N != 2 || rows[0].Verdict == "" {
		t.Fatalf("published rows: %+v", rows)
	}
	if rows[1].Effect != "layer" || rows[1].Verdict != "cannot tell" || !bytes.Contains([]byte(rows[1].Why), []byte("not run here")) {
		t.Errorf("the overlay cell cannot run natively: %+v", rows[1])
	}
}
