package swarm

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/client"
)

// otherEngine is an engine API at a unix socket of the test's (a fake at the process boundary:
// a second dockerd of the host, as e2e's own) that answers docker info with its ID and a swarm
// state; any other request fails the test.
func otherEngine(t *testing.T, id, state string) client.APIClient {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "engine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/info") {
			t.Errorf("the engine was asked %s %s: only docker info is expected", r.Method, r.URL.Path)
			http.Error(w, "not expected", http.StatusNotImplemented)
			return
		}
		var info system.Info
		info.ID, info.Swarm.LocalNodeState = id, swarm.LocalNodeState(state)
		_ = json.NewEncoder(w).Encode(info)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	c, err := client.NewClientWithOpts(client.WithHost("unix://"+sock), client.WithVersion("1.41"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMarkerIsTheEngines: a release on another engine of the host, in no swarm, neither takes
// the marker of the swarm boxbench made on the first engine for its own nor forgets it (it
// did: the first engine's swarm was then kept for ever, nothing naming it as boxbench's); the
// marker of a host from before markers were the engines' is adopted by the engine whose swarm
// it names, and left alone by the other.
func TestMarkerIsTheEngines(t *testing.T) {
	dir := StateDir
	StateDir = t.TempDir()
	t.Cleanup(func() { StateDir = dir })
	first := marker{ClusterID: "cluster-of-the-first", NodeID: "n1"}
	if err := writeMarker("AAAA:BBBB:CCCC", first); err != nil {
		t.Fatal(err)
	}
	p := &Platform{engine: otherEngine(t, "DDDD:EEEE:FFFF", "inactive"), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if done, err := p.release(context.Background(), false); err != nil || len(done) > 0 {
		t.Errorf("release on the other engine: %v %v, want nothing done", done, err)
	}
	if m, err := readMarker("AAAA:BBBB:CCCC", ""); err != nil || m.ClusterID != first.ClusterID {
		t.Errorf("the first engine's marker after a release on the other: %+v %v", m, err)
	}
	if m, err := readMarker("DDDD:EEEE:FFFF", ""); err == nil {
		t.Errorf("the other engine reads a marker: %+v", m)
	}
	if got := filepath.Base(markerPath("../AAAA:BBBB")); got != "swarm-created----AAAA-BBBB.json" {
		t.Errorf("marker file of engine ../AAAA:BBBB: %s", got)
	}

	// A legacy marker: only the engine whose active swarm it names adopts it.
	if err := os.Remove(markerPath("AAAA:BBBB:CCCC")); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(first)
	legacy := filepath.Join(StateDir, legacyMarkerFile)
	if err := os.WriteFile(legacy, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.release(context.Background(), false); err != nil {
		t.Error(err)
	}
	if _, err := readMarker("DDDD:EEEE:FFFF", "another-cluster"); err == nil {
		t.Error("an engine in another swarm adopted the legacy marker")
	}
	if _, err := os.Stat(legacy); err != nil {
		t.Errorf("the legacy marker after the other engine's release and read: %v", err)
	}
	if m, err := readMarker("AAAA:BBBB:CCCC", first.ClusterID); err != nil || m.ClusterID != first.ClusterID {
		t.Errorf("the first engine's read of the legacy marker naming its swarm: %+v %v", m, err)
	}
	if _, err := os.Stat(legacy); err == nil {
		t.Error("the legacy marker is still there after its adoption")
	}
	if m, err := readMarker("AAAA:BBBB:CCCC", ""); err != nil || m.ClusterID != first.ClusterID {
		t.Errorf("the adopted marker: %+v %v", m, err)
	}
}
