package recovery

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCall(t *testing.T) {
	plain := errors.New("plain")
	if err := Call("x", func() error { return plain }); err != plain {
		t.Fatalf("error not passed through: %v", err)
	}
	if err := Call("x", func() error { return nil }); err != nil {
		t.Fatalf("nil became %v", err)
	}
	err := Call("ycsb worker 3", func() error {
		s := []int{1}
		i := len(s) + 2
		return fmt.Errorf("%d", s[i]) // a real runtime panic
	})
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("panic not recovered into *Error: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"panic in ycsb worker 3", "index out of range", "recovery_test.go"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}
