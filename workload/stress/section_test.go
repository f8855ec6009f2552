package stress

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec/section"
)

// TestSectionJSON: what a decoded section marshals to, the row's JSON reads back (an agent's
// job carries the experiment as JSON, neighbours included), and an unknown field is refused.
func TestSectionJSON(t *testing.T) {
	for _, text := range []string{`{cpu: 2}`, `{vm: 1, vmBytes: 256MiB}`, `{cpu: 1, vm: 2, vmBytes: 1GiB}`} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(text), &n); err != nil {
			t.Fatal(err)
		}
		o, ps := Own().YAML(n.Content[0], "neighbours.n.workload", section.Common{Type: "stress"})
		if len(ps) > 0 {
			t.Fatalf("%s: %v", text, ps)
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Own().JSON(b)
		if err != nil || !reflect.DeepEqual(back, o) {
			t.Errorf("%s: %s read back as %#v, %v; want %#v", text, b, back, err, o)
		}
	}
	if _, err := Own().JSON([]byte(`{"CPU": 1, "IO": 2}`)); err == nil || !strings.Contains(err.Error(), "IO") {
		t.Errorf("unknown field: %v", err)
	}
	if c := (Section{CPU: 1, VM: 2, VMBytes: 64 << 20}).Config(time.Minute); c != (Config{CPU: 1, VM: 2, VMBytes: 64 << 20, Duration: time.Minute}) {
		t.Errorf("config %+v", c)
	}
}
