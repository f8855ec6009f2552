package swarm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/client"
)

// TestHostileSwarmMarker: the marker that makes boxbench leave a swarm is refused unless it is a
// regular file of boxbench's (root's or its user's, not writable by group or others, at most
// 64 KiB, not a link or a FIFO) holding only a marker's fields, of their shapes. A refused
// marker naming the engine's active swarm is not acted on: release asks the engine nothing but
// its info (no service list, no leave). The control, the same marker written by writeMarker,
// is read.
func TestHostileSwarmMarker(t *testing.T) {
	const engineID, cluster = "AAAA:BBBB:CCCC", "q0b6x3m2nsz8wz4fhx1d3c2ik"
	good := marker{ClusterID: cluster, NodeID: "n1", Listen: "127.0.0.1:2377"}
	raw, _ := json.Marshal(good)
	cases := map[string]func(path string) error{
		"link": func(path string) error {
			target := filepath.Join(t.TempDir(), "m.json")
			if err := os.WriteFile(target, raw, 0o644); err != nil {
				return err
			}
			return os.Symlink(target, path)
		},
		"fifo": func(path string) error { return syscall.Mkfifo(path, 0o644) },
		"huge": func(path string) error {
			return os.WriteFile(path, append(raw, bytes.Repeat([]byte(" "), 1<<20)...), 0o644)
		},
		"group-writable": func(path string) error { return writeMode(path, raw, 0o664) },
		"another user's": func(path string) error {
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				return err
			}
			return os.Chown(path, 65534, 65534)
		},
		"unknown field": func(path string) error {
			return os.WriteFile(path, append(bytes.Clone(raw[:len(raw)-1]), []byte(`,"leave":"all"}`)...), 0o644)
		},
		"listen not loopback": func(path string) error {
			m := good
			m.Listen = "0.0.0.0:2377"
			b, _ := json.Marshal(m)
			return os.WriteFile(path, b, 0o644)
		},
		"cluster id with escapes": func(path string) error {
			m := good
			m.ClusterID = cluster + "\x1b]0;owned\x07"
			b, _ := json.Marshal(m)
			return os.WriteFile(path, b, 0o644)
		},
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			if os.Geteuid() != 0 && (name == "another user's") {
				t.Skip("chown needs root")
			}
			dir := StateDir
			StateDir = t.TempDir()
			t.Cleanup(func() { StateDir = dir })
			if err := plant(markerPath(engineID)); err != nil {
				t.Fatal(err)
			}
			if m, err := readMarker(engineID, cluster); err == nil {
				t.Errorf("read the hostile marker: %+v", m)
			} else {
				t.Log(err)
			}
			engine, asked := activeEngine(t, engineID, cluster)
			p := &Platform{engine: engine, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if done, err := p.release(context.Background(), false); len(done) > 0 {
				t.Errorf("release through a hostile marker: did %v (%v)", done, err)
			}
			if got := asked(); len(got) > 0 {
				t.Errorf("release through a hostile marker asked the engine %v: only its info may be asked", got)
			}
		})
	}
	t.Run("control", func(t *testing.T) {
		dir := StateDir
		StateDir = t.TempDir()
		t.Cleanup(func() { StateDir = dir })
		if err := writeMarker(engineID, good); err != nil {
			t.Fatal(err)
		}
		if m, err := readMarker(engineID, cluster); err != nil || m.ClusterID != cluster {
			t.Errorf("the valid marker: %+v %v", m, err)
		}
	})
}

func writeMode(path string, b []byte, mode os.FileMode) error {
	if err := os.WriteFile(path, b, mode); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

// activeEngine is an engine API at a unix socket of the test's (a fake at the process boundary)
// whose info says it manages the active swarm cluster; every other request is recorded, and
// answered with an error.
func activeEngine(t *testing.T, id, cluster string) (client.APIClient, func() []string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "engine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/info") {
			mu.Lock()
			asked = append(asked, r.Method+" "+r.URL.Path)
			mu.Unlock()
			http.Error(w, "not expected", http.StatusNotImplemented)
			return
		}
		var info system.Info
		info.ID, info.Swarm.LocalNodeState, info.Swarm.ControlAvailable = id, swarm.LocalNodeStateActive, true
		info.Swarm.Cluster = &swarm.ClusterInfo{ID: cluster}
		info.Swarm.Nodes = 1
		_ = json.NewEncoder(w).Encode(info)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	c, err := client.NewClientWithOpts(client.WithHost("unix://"+sock), client.WithVersion("1.41"))
	if err != nil {
		t.Fatal(err)
	}
	return c, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), asked...) }
}
