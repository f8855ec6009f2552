package dbms

import (
	"strings"
	"testing"
)

type noUser struct{ Redis }

func (noUser) User() string { return "boxbench-no-such-user" }

type noBinary struct{ Redis }

func (noBinary) StartCommand(l Layout) []string { return []string{"/nonexistent/redis-server"} }

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		d    DBMS
		says []string
	}{
		{noUser{}, []string{`system user "boxbench-no-such-user"`, "apt-get install -y redis-server", "useradd --system"}},
		{noBinary{}, []string{"redis is not installed", "/nonexistent/redis-server missing", "apt-get install -y redis-server"}},
	} {
		err := Missing(tc.d)
		if err == nil {
			t.Fatalf("%T: nothing missing", tc.d)
		}
		for _, s := range tc.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%T: %q lacks %q", tc.d, err, s)
			}
		}
	}
}
