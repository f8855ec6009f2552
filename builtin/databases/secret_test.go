package databases

import (
	"strings"
	"testing"

	"github.com/boxbench/boxbench/dbms"
)

// TestWithPassword, for every database of the table: the password is in the configuration the
// server reads, in no argv and in no config hash; the hash is the same for every password.
func TestWithPassword(t *testing.T) {
	s := dbms.Settings{MemoryBytes: 256 << 20}
	for _, base := range DBMSs() {
		name := base.Name()
		pw1, pw2 := dbms.NewPassword(), dbms.NewPassword()
		d1, d2 := dbms.WithPassword(base, pw1), dbms.WithPassword(base, pw2)
		if pw1 == pw2 || len(pw1) != 32 {
			t.Fatalf("passwords %q %q", pw1, pw2)
		}
		if d1.Client().Password != pw1 {
			t.Errorf("%s: client without the password", name)
		}
		var all strings.Builder
		for _, c := range d1.ConfigFiles(s) {
			all.Write(c)
		}
		if !strings.Contains(all.String(), pw1) {
			t.Errorf("%s: the configuration does not carry the password", name)
		}
		if strings.Contains(all.String(), " trust") {
			t.Errorf("%s: trust authentication with a password set", name)
		}
		argv := strings.Join(d1.StartCommand(dbms.Layout{DataDir: "/d", RunDir: "/r", Listen: "0.0.0.0", Port: 1}), " ")
		if strings.Contains(argv, pw1) {
			t.Errorf("%s: the start command holds the password: %s", name, argv)
		}
		if dbms.TemplateHash(d1, s) != dbms.TemplateHash(d2, s) {
			t.Errorf("%s: the config hash depends on the password", name)
		}
		if dbms.TemplateHash(d1, s) == dbms.ConfigHash(d1.ConfigFiles(s)) {
			t.Errorf("%s: the config hash is that of the files with the password", name)
		}
	}
}
