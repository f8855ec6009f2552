package kubernetes

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/boxbench/boxbench/internal/safefile"
)

// MaxKubeconfigBytes caps the kubeconfig read (certificates inlined make a few KiB; a file of
// many clusters a few hundred).
const MaxKubeconfigBytes = 1 << 20

// The rule for a kubeconfig (docs/security.md), the way kubectl, ssh and git treat
// configuration they did not write. A spec is not trusted; the command line and the
// environment are:
//
//   - The kubeconfig comes from KUBECONFIG, ~/.kube/config or the local cluster's contract
//     path, or else from the spec (Config.Kubeconfig). A spec-named one must be a regular file
//     (not a FIFO, device or socket, never reached through a symbolic link), at most
//     MaxKubeconfigBytes, owned by root or the user running boxbench (SUDO_UID under sudo) and
//     not writable by group or others, in directories only they can change — so a file another
//     user dropped in /tmp is refused. Every kubeconfig is read by boxbench (non-blocking,
//     capped), never by client-go, so none can make boxbench block or read without end.
//   - Credential commands — an exec plugin or an auth-provider (which runs a cmd-path or talks
//     to an identity provider) — run only from the user's own configuration: refused when the
//     spec named the kubeconfig or the context (a spec could otherwise send the user's
//     credentials from a plugin to a server it chose), and never during `plan`
//     (Platform.NoCredentialCommands), which must not run a program.
//
// loadConfig returns the REST config of c's kubeconfig and context and the kubeconfig's path,
// or why it may not be used. field is the spec's field that names c's kubeconfig
// (kubernetes.kubeconfig, or kubernetes.clusters.NAME.kubeconfig), for the errors.
func loadConfig(c Config, field string, noCommands bool) (*rest.Config, string, error) {
	path := kubeconfigPath(c)
	rule := safefile.Rule{Max: MaxKubeconfigBytes}
	if c.Kubeconfig != "" {
		rule.NoFollow, rule.Owners = true, safefile.InvokingUsers()
	}
	data, err := safefile.Read(path, rule)
	if err != nil {
		switch {
		case c.Kubeconfig == "":
		case errors.Is(err, fs.ErrNotExist):
			err = fmt.Errorf("%w (%s names it: is that cluster up?)", err, field)
		default:
			err = fmt.Errorf("%w (%s: a kubeconfig a spec names must be a regular file of root or the user running boxbench, not writable by others; or give KUBECONFIG instead)", err, field)
		}
		return nil, path, err
	}
	kc, err := clientcmd.Load(data)
	if err != nil {
		return nil, path, err
	}
	origin(kc, path)
	if err := clientcmd.ResolveLocalPaths(kc); err != nil {
		return nil, path, err
	}
	name := kc.CurrentContext
	if c.Context != "" {
		name = c.Context
	}
	why := ""
	switch {
	case c.Kubeconfig != "":
		why = "the spec named the kubeconfig (" + field + ")"
	case c.Context != "":
		why = "the spec named the context (" + strings.TrimSuffix(field, "kubeconfig") + "context)"
	case noCommands:
		why = "plan never runs a program"
	}
	if why != "" {
		if err := noCredentialCommand(kc, name, why); err != nil {
			return nil, path, err
		}
	}
	rc, err := clientcmd.NewNonInteractiveClientConfig(*kc, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, path, err
	}
	if why != "" && (rc.ExecProvider != nil || rc.AuthProvider != nil) { // the same rule, on what client-go will use
		return nil, path, fmt.Errorf("context %q authenticates with a credential command, which is refused: %s", name, why)
	}
	return rc, path, nil
}

// noCredentialCommand refuses a context whose user runs an exec plugin or an auth-provider.
func noCredentialCommand(kc *clientcmdapi.Config, context, why string) error {
	ctx := kc.Contexts[context]
	if ctx == nil {
		return fmt.Errorf("context %q is not in the kubeconfig", context)
	}
	u := kc.AuthInfos[ctx.AuthInfo]
	if u == nil {
		return nil
	}
	switch {
	case u.Exec != nil:
		return fmt.Errorf("user %q of context %q runs the exec credential plugin %q, which boxbench refuses: %s (valid: a kubeconfig of your own given by KUBECONFIG, with its current context)",
			ctx.AuthInfo, context, filepath.Base(u.Exec.Command), why)
	case u.AuthProvider != nil:
		return fmt.Errorf("user %q of context %q uses the auth-provider %q, which boxbench refuses: %s (valid: a kubeconfig of your own given by KUBECONFIG, with its current context)",
			ctx.AuthInfo, context, u.AuthProvider.Name, why)
	}
	return nil
}

// origin records where each entry came from, as clientcmd.LoadFromFile does, so relative
// paths in it resolve against the kubeconfig's directory.
func origin(kc *clientcmdapi.Config, path string) {
	for _, a := range kc.AuthInfos {
		a.LocationOfOrigin = path
	}
	for _, c := range kc.Clusters {
		c.LocationOfOrigin = path
	}
	for _, c := range kc.Contexts {
		c.LocationOfOrigin = path
	}
}
