package image

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestBoundedNoAnswer: against an engine that accepts and never answers (a unix socket of the
// test's), Info ends with a NoAnswerError naming DOCKER_HOST; the next question, of another
// kind, gets the same error without waiting again; a caller's own cancellation stays itself.
func TestBoundedNoAnswer(t *testing.T) {
	sock, _ := testenv.Silent(t, "unix")
	t.Setenv("DOCKER_HOST", "unix://"+sock)

	cancelled, err := Connect()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	if _, err := cancelled.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled Ping: %v, want the caller's cancellation", err)
	}

	c, err := Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Info(context.Background())
	var na *NoAnswerError
	if !errors.As(err, &na) || !strings.Contains(err.Error(), "container engine at DOCKER_HOST=unix://"+sock+" did not answer within 10 s") {
		t.Fatalf("Info: %v, want a NoAnswerError naming DOCKER_HOST", err)
	}
	begun := time.Now()
	if _, err := c.ImageList(context.Background(), image.ListOptions{}); !errors.As(err, &na) {
		t.Errorf("ImageList after a silence: %v, want the same NoAnswerError", err)
	}
	if time.Since(begun) >= AnswerTimeout {
		t.Errorf("ImageList waited again for an engine known to be silent")
	}
	if Bound(c) != c {
		t.Error("Bound wrapped a bounded client again")
	}
	var _ client.APIClient = c
}

// TestBoundedSlowIsNotSilent: an engine that has answered before and then misses a deadline is
// asked again the next time (slow is not gone): its Ping answers after its Info did not.
func TestBoundedSlowIsNotSilent(t *testing.T) {
	dir, err := os.MkdirTemp("", "slow-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "engine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/_ping") {
			w.Header().Set("API-Version", "1.41")
			w.Write([]byte("OK"))
			return
		}
		<-r.Context().Done() // every other question: no answer
	})}
	go srv.Serve(l)
	defer srv.Close()
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	c, err := Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	var na *NoAnswerError
	if _, err := c.Info(context.Background()); !errors.As(err, &na) {
		t.Fatalf("Info: %v, want a NoAnswerError", err)
	}
	if _, err := c.Ping(context.Background()); err != nil {
		t.Errorf("Ping after a slow Info: %v, want the engine asked again", err)
	}
}
