package report

import "strings"

// label joins the values of keys in params: "docker overlay host".
func label(params map[string]string, keys []string) string {
	var parts []string
	for _, k := range keys {
		if v := params[k]; v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, " ")
}

// kvLabel joins "k=v" for keys present in params.
func kvLabel(params map[string]string, keys []string, sep string) string {
	var parts []string
	for _, k := range keys {
		if v, ok := params[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, sep)
}
