package command

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestErrorCarriesArgvAndOutput(t *testing.T) {
	_, err := Run(context.Background(), "sh", "-c", "echo boom >&2; exit 3")
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "sh -c") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("got %v", err)
	}
}

func TestCancelledIsDeadlineExceeded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, "sleep", "5")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a command killed by its context: %v, want context.DeadlineExceeded", err)
	}
}

func TestTail(t *testing.T) {
	if got := Tail([]byte("line1\nline2\nline3"), 8); got != "line3" {
		t.Errorf("Tail = %q", got)
	}
}
