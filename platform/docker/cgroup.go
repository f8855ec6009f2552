package docker

import (
	"os"
	"strings"
)

// readFile returns a control file of a group, trimmed ("?" when it cannot be read: the value is
// only recorded).
func readFile(dir, name string) string {
	b, err := os.ReadFile(dir + "/" + name)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
