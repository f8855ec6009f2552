package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestCompletion: `boxbench completion SHELL` prints cobra's script for the command tree
// unchanged (the terminal filter every command writes through keeps it whole), and bash reads
// the bash one without a syntax error. scripts/release tests completing with it.
func TestCompletion(t *testing.T) {
	gen := map[string]func(*bytes.Buffer) error{
		"bash": func(b *bytes.Buffer) error { return Command().GenBashCompletionV2(b, true) },
		"zsh":  func(b *bytes.Buffer) error { return Command().GenZshCompletion(b) },
		"fish": func(b *bytes.Buffer) error { return Command().GenFishCompletion(b, true) },
	}
	for shell, generate := range gen {
		var out, errb, want bytes.Buffer
		if code := Main(context.Background(), []string{"completion", shell}, &out, &errb); code != ExitOK {
			t.Fatalf("completion %s: exit %d: %s", shell, code, errb.String())
		}
		if err := generate(&want); err != nil {
			t.Fatal(err)
		}
		if out.Len() < 1000 || !bytes.Equal(out.Bytes(), want.Bytes()) {
			t.Errorf("completion %s: %d bytes, not cobra's script of %d", shell, out.Len(), want.Len())
		}
		if shell != "bash" {
			continue
		}
		testenv.NeedCommands(t, "bash")
		script := filepath.Join(t.TempDir(), "boxbench.bash")
		if err := os.WriteFile(script, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if msg, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
			t.Errorf("bash -n: %v\n%s", err, msg)
		}
	}
}
