package kubernetes

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/boxbench/boxbench/platform"
)

var (
	listOne = metav1.ListOptions{Limit: 1}
	listAll = metav1.ListOptions{}
	getOpts = metav1.GetOptions{}
)

var notLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// dnsLabel turns s into a DNS-1123 label fragment: lower case, [a-z0-9-], at most n characters,
// no leading or trailing '-'.
func dnsLabel(s string, n int) string {
	s = notLabel.ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > n {
		s = s[:n]
	}
	return strings.Trim(s, "-")
}

// objectName is a recognisable object name: bb-<experiment>-<run>-<random>, a DNS-1123 label
// (63 characters). The random suffix keeps a leftover of a crashed run from blocking a new one.
func objectName(r platform.Request) (string, error) {
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	n := fmt.Sprintf("bb-%s-%s-%x", dnsLabel(r.Experiment, 30), dnsLabel(r.Run, 16), rnd)
	n = strings.ReplaceAll(n, "--", "-")
	if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
		return "", fmt.Errorf("object name %q from experiment %q and run %q: %s", n, r.Experiment, r.Run, strings.Join(errs, "; "))
	}
	return n, nil
}

// labelValue is s as a label value: the value itself when valid, else a valid prefix (the
// annotation AnnotationExperiment keeps the whole).
func labelValue(s string) string {
	if len(validation.IsValidLabelValue(s)) == 0 {
		return s
	}
	v := regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(s, "-")
	if len(v) > 63 {
		v = v[:63]
	}
	return strings.Trim(v, "-_.")
}

// meta is the metadata of every object of box name.
func meta(r platform.Request, name, role string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name,
		Labels: map[string]string{LabelBoxbench: "1", LabelExperiment: labelValue(r.Experiment),
			LabelRun: labelValue(r.Run), LabelRole: role, LabelBox: name},
		Annotations: map[string]string{AnnotationExperiment: r.Experiment}}
}

// experimentOf is the experiment an object belongs to, from its annotation (its label when the
// annotation is missing); "" when it has neither.
func experimentOf(m metav1.ObjectMeta) string {
	if e := m.Annotations[AnnotationExperiment]; e != "" {
		return e
	}
	return m.Labels[LabelExperiment]
}

// ValidateConfig checks the names of a Config that reach object names and API fields.
func ValidateConfig(c Config) error {
	var errs []string
	if c.Namespace != "" {
		for _, e := range validation.IsDNS1123Label(c.Namespace) {
			errs = append(errs, "namespace "+c.Namespace+": "+e)
		}
	}
	for _, n := range []string{c.Node, c.ClientNode} {
		if n != "" {
			for _, e := range validation.IsDNS1123Subdomain(n) {
				errs = append(errs, "node "+n+": "+e)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
