package dbms

import (
	"os"
	"strings"
	"testing"
)

// The password is in the configuration the server reads, in no argv and in no config hash;
// the hash is the same for every password.
func TestWithPassword(t *testing.T) {
	s := Settings{MemoryBytes: 256 << 20}
	for _, name := range Names() {
		base, _ := Get(name)
		pw1, pw2 := NewPassword(), NewPassword()
		d1, d2 := WithPassword(base, pw1), WithPassword(base, pw2)
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
		argv := strings.Join(d1.StartCommand(Layout{DataDir: "/d", RunDir: "/r", Listen: "0.0.0.0", Port: 1}), " ")
		if strings.Contains(argv, pw1) {
			t.Errorf("%s: the start command holds the password: %s", name, argv)
		}
		if TemplateHash(d1, s) != TemplateHash(d2, s) {
			t.Errorf("%s: the config hash depends on the password", name)
		}
		if TemplateHash(d1, s) == ConfigHash(d1.ConfigFiles(s)) {
			t.Errorf("%s: the config hash is that of the files with the password", name)
		}
	}
}

// TestWrappersKeepBuiltFiles: a database with a password or an idle box runs the same image,
// so its built files (part of the image's recipe) are the database's.
func TestWrappersKeepBuiltFiles(t *testing.T) {
	for _, d := range []DBMS{WithPassword(FerretDB{}, "pw"), Idle(FerretDB{}), Idle(WithPassword(FerretDB{}, "pw"))} {
		if got := BuiltFiles(d); len(got) != 1 || got[0] != FerretDBBinary {
			t.Errorf("BuiltFiles(%T) = %v, want [%s]", d, got, FerretDBBinary)
		}
	}
	if got := BuiltFiles(WithPassword(Redis{}, "pw")); got != nil {
		t.Errorf("BuiltFiles(redis with a password) = %v", got)
	}
	if got := ServerBinary(WithPassword(Etcd{}, "pw")); got != "/usr/bin/etcd" {
		t.Errorf("ServerBinary(etcd with a password) = %q", got)
	}
}

// TestFerretDBVersionMatchesScript: the binary the dbms runs is the one `make setup` builds.
func TestFerretDBVersionMatchesScript(t *testing.T) {
	b, err := os.ReadFile("../scripts/ferretdb.sh")
	if err != nil {
		t.Fatal(err)
	}
	if want := "FERRETDB_VERSION=${FERRETDB_VERSION:-" + FerretDBVersion + "}"; !strings.Contains(string(b), want) {
		t.Errorf("scripts/ferretdb.sh does not default to %s (want the line %q)", FerretDBVersion, want)
	}
}
