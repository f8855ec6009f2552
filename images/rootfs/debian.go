package rootfs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/internal/command"
)

// Where the host's apt sources live; variables only so tests can point at fixtures.
var (
	SourcesDeb822   = "/etc/apt/sources.list.d/debian.sources"
	SourcesOneLine  = "/etc/apt/sources.list"
	errNoMirrorLine = errors.New("no apt source for the suite")
)

// Source is one apt source: a mirror URI, a suite and its components.
type Source struct {
	URI        string   `json:"uri"`
	Suite      string   `json:"suite"`
	Components []string `json:"components"`
}

// HostSources returns the host's apt sources for suite and its companion suites
// (<suite>-updates, <suite>-security, …), the main suite first. They are read at run time,
// never written into boxbench: users behind a firewall point apt at their own mirror, and the
// trees must come from the same place as the host's packages.
func HostSources(suite string) ([]Source, error) {
	var errs []error
	for _, src := range []struct {
		path  string
		parse func(io.Reader) ([]Source, error)
	}{{SourcesDeb822, parseDeb822}, {SourcesOneLine, parseOneLine}} {
		f, err := os.Open(src.path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		all, err := src.parse(f)
		f.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", src.path, err))
			continue
		}
		if got := forSuite(all, suite); len(got) > 0 {
			return got, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", src.path, errNoMirrorLine))
	}
	return nil, fmt.Errorf("find the Debian mirror for %s in the host's apt sources: %w", suite, errors.Join(errs...))
}

// forSuite keeps the sources of suite and its companions, the main suite first, without
// duplicates.
func forSuite(all []Source, suite string) []Source {
	var main, rest []Source
	seen := map[string]bool{}
	for _, s := range all {
		key := s.URI + " " + s.Suite
		if seen[key] {
			continue
		}
		seen[key] = true
		switch {
		case s.Suite == suite && main == nil:
			main = append(main, s)
		case strings.HasPrefix(s.Suite, suite+"-"):
			rest = append(rest, s)
		}
	}
	if main == nil {
		return nil
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].Suite+rest[i].URI < rest[j].Suite+rest[j].URI })
	return append(main, rest...)
}

// parseDeb822 reads a deb822 .sources file: one Source per URI and suite of each enabled "deb"
// stanza.
func parseDeb822(r io.Reader) ([]Source, error) {
	var out []Source
	stanza := map[string]string{}
	flush := func() {
		if hasWord(stanza["types"], "deb") && !strings.EqualFold(stanza["enabled"], "no") {
			for _, u := range strings.Fields(stanza["uris"]) {
				for _, su := range strings.Fields(stanza["suites"]) {
					out = append(out, Source{URI: strings.TrimSuffix(u, "/"), Suite: su,
						Components: strings.Fields(stanza["components"])})
				}
			}
		}
		stanza = map[string]string{}
	}
	s := bufio.NewScanner(r)
	last := ""
	for s.Scan() {
		line := s.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case strings.HasPrefix(line, "#"):
		case line[0] == ' ' || line[0] == '\t':
			if last != "" {
				stanza[last] += " " + strings.TrimSpace(line)
			}
		default:
			k, v, ok := strings.Cut(line, ":")
			if ok {
				last = strings.ToLower(strings.TrimSpace(k))
				stanza[last] = strings.TrimSpace(v)
			}
		}
	}
	flush()
	return out, s.Err()
}

// parseOneLine reads the classic "deb [opts] URI suite components" format.
func parseOneLine(r io.Reader) ([]Source, error) {
	var out []Source
	s := bufio.NewScanner(r)
	for s.Scan() {
		f := strings.Fields(strings.SplitN(s.Text(), "#", 2)[0])
		if len(f) < 3 || f[0] != "deb" {
			continue
		}
		f = f[1:]
		if strings.HasPrefix(f[0], "[") { // options: [arch=amd64 signed-by=…]
			for len(f) > 0 && !strings.HasSuffix(f[0], "]") {
				f = f[1:]
			}
			if len(f) > 0 {
				f = f[1:]
			}
		}
		if len(f) >= 2 {
			out = append(out, Source{URI: strings.TrimSuffix(f[0], "/"), Suite: f[1], Components: f[2:]})
		}
	}
	return out, s.Err()
}

func hasWord(list, w string) bool {
	for _, f := range strings.Fields(list) {
		if f == w {
			return true
		}
	}
	return false
}

// ParseStatus reads a dpkg status file and returns the versions of the installed packages.
func ParseStatus(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	var pkg, ver, status string
	flush := func() {
		if pkg != "" && ver != "" && strings.HasSuffix(status, " installed") {
			out[pkg] = ver
		}
		pkg, ver, status = "", "", ""
	}
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for s.Scan() {
		line := s.Text()
		if line == "" {
			flush()
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || line[0] == ' ' {
			continue
		}
		switch k {
		case "Package":
			pkg = strings.TrimSpace(v)
		case "Version":
			ver = strings.TrimSpace(v)
		case "Status":
			status = strings.TrimSpace(v)
		}
	}
	flush()
	return out, s.Err()
}

// ParsePasswd returns the uid and primary gid of name in an /etc/passwd file.
func ParsePasswd(r io.Reader, name string) (uid, gid int, err error) {
	s := bufio.NewScanner(r)
	for s.Scan() {
		f := strings.Split(s.Text(), ":")
		if len(f) < 4 || f[0] != name {
			continue
		}
		uid, err1 := strconv.Atoi(f[2])
		gid, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			return 0, 0, fmt.Errorf("passwd entry for %s: bad uid/gid %q:%q", name, f[2], f[3])
		}
		return uid, gid, nil
	}
	if err := s.Err(); err != nil {
		return 0, 0, err
	}
	return 0, 0, fmt.Errorf("user %s not in /etc/passwd", name)
}

// FormatVersions renders package versions as one label value: "name=version" pairs, sorted,
// separated by spaces (neither names nor Debian versions contain spaces).
func FormatVersions(v map[string]string) string {
	names := make([]string, 0, len(v))
	for n := range v {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(n + "=" + v[n])
	}
	return b.String()
}

// ParseVersions reads what FormatVersions wrote.
func ParseVersions(s string) map[string]string {
	out := map[string]string{}
	for _, f := range strings.Fields(s) {
		if n, v, ok := strings.Cut(f, "="); ok {
			out[n] = v
		}
	}
	return out
}

// HostVersion returns the version of a Debian package installed on the host ("" and an error
// when it is not installed).
func HostVersion(ctx context.Context, pkg string) (string, error) {
	out, err := command.Run(ctx, "dpkg-query", "--show", "--showformat=${Version}\t${db:Status-Status}", pkg)
	if ctx.Err() != nil {
		return "", fmt.Errorf("query the host's %s version: %w", pkg, ctx.Err())
	}
	if err != nil {
		return "", fmt.Errorf("%s is not installed on the host: %w", pkg, err)
	}
	ver, status, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if status != "installed" || ver == "" {
		return "", fmt.Errorf("%s is not installed on the host (dpkg status %q)", pkg, status)
	}
	return ver, nil
}
