package builtin

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/spec"
)

// SetupOf gives the steps of scripts/setup.sh and the images one spec needs: the quickstart's
// Redis natively and in Docker; the isolation study's MariaDB under LXC and in a guest.
func TestSetupOf(t *testing.T) {
	ps := Platforms(nil)
	for _, tc := range []struct {
		file                string
		steps, images, flag string
	}{
		{"../examples/quickstart.yaml", "docker images redis tools", "redis", ""},
		{"../studies/isolation.yaml", "images lxc mariadb tools vm", "mariadb", "vm"},
		{"../examples/runtimes.yaml", "", "", ""},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		e, err := spec.Parse(data, tc.file, Vocabulary(ps))
		if err != nil {
			t.Fatal(err)
		}
		s := SetupOf(context.Background(), ps, e)
		if tc.steps == "" { // runtimes.yaml: an OCI runtime asks for the runtimes step
			if !slices.Contains(s.Steps, "runtimes") || !slices.Contains(s.Steps, "docker") {
				t.Errorf("%s: steps %v, want runtimes and docker among them", tc.file, s.Steps)
			}
			continue
		}
		if got := strings.Join(s.Steps, " "); got != tc.steps {
			t.Errorf("%s: steps %q, want %q", tc.file, got, tc.steps)
		}
		if got := strings.Join(s.Images, ","); got != tc.images {
			t.Errorf("%s: images %q, want %q", tc.file, got, tc.images)
		}
		if got := strings.Join(s.ImageFlags, " "); got != tc.flag {
			t.Errorf("%s: image flags %q, want %q", tc.file, got, tc.flag)
		}
	}
}

// Every step SetupOf can name is one of scripts/setup.sh's: each platform's, each database's,
// tools and runtimes.
func TestSetupStepsExist(t *testing.T) {
	b, err := os.ReadFile("../scripts/setup.sh")
	if err != nil {
		t.Fatal(err)
	}
	table := regexp.MustCompile(`(?s)declare -A PKGS=\((.*?)\n\)`).FindSubmatch(b)
	if table == nil {
		t.Fatal("no PKGS table in scripts/setup.sh")
	}
	have := map[string]bool{}
	for _, m := range regexp.MustCompile(`\[([a-z0-9-]+)\]=`).FindAllSubmatch(table[1], -1) {
		have[string(m[1])] = true
	}
	want := []string{"tools", "runtimes"}
	want = append(want, databases.Names()...)
	for _, p := range Platforms(nil) {
		want = append(want, p.Info().Setup...)
	}
	for _, s := range want {
		if !have[s] {
			t.Errorf("step %q is not in scripts/setup.sh's PKGS (has %v)", s, have)
		}
	}
}
