package kubernetes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/images/image/tarball"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
)

const stopTimeout = 60 * time.Second

// box is one server pod and what it uses.
type box struct {
	p     *Platform
	req   platform.Request
	cfg   Config
	cl    *cluster
	node  *corev1.Node
	local bool
	// hostNetns: the node is in this host's network namespace (netns.go); a hostNetwork
	// server is then reached on loopback, else at the node's address.
	hostNetns bool
	// pc is the cluster on the pod network this box is a member of (nil otherwise), and
	// clientAt the node the cluster's client runs on.
	pc       *podCluster
	clientAt string
	img      image.Image
	pull     corev1.PullPolicy

	name     string // the name of every object of the box
	ns       string
	ownNS    bool
	store    *storage.Dir // host storage (hostpath, localpv)
	hostDir  string       // its host path
	layout   dbms.Layout
	ep       driver.Endpoint
	podIP    string
	group    *cgroup.Ref // the server container's group when the node is this host
	statsErr error       // why the kubelet's summary API cannot be read, when it is the telemetry
	applied  resource.Applied
	warns    []platform.Warning
	facts    map[string]string
	orch     *platform.Orchestrator // what Traits say of the cluster: orchestrator(facts)

	mu                sync.Mutex
	pod, svc, pvc, pv string // created objects still to delete
	exited            chan struct{}
	exitErr           error
	stopWatch         context.CancelFunc
	down              atomic.Bool
}

func (b *box) setPod(n string) { b.mu.Lock(); b.pod = n; b.mu.Unlock() }
func (b *box) setSvc(n string) { b.mu.Lock(); b.svc = n; b.mu.Unlock() }
func (b *box) setPVC(n string) { b.mu.Lock(); b.pvc = n; b.mu.Unlock() }
func (b *box) setPV(n string)  { b.mu.Lock(); b.pv = n; b.mu.Unlock() }

// watch follows the pod until the server container terminates (or the pod is gone) and then
// closes b.exited with the reason in b.exitErr.
func (b *box) watch() {
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	b.mu.Lock()
	b.exited, b.stopWatch = exited, cancel
	b.mu.Unlock()
	go func() {
		defer close(exited)
		for {
			pod, err := b.cl.cs.CoreV1().Pods(b.ns).Get(ctx, b.name, getOpts)
			if err == nil {
				for _, s := range pod.Status.ContainerStatuses {
					if t := s.State.Terminated; s.Name == ctrServer && t != nil {
						b.exitErr = fmt.Errorf("server container %s (exit code %d) %s", t.Reason, t.ExitCode, t.Message)
						return
					}
				}
				if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
					b.exitErr = fmt.Errorf("pod %s %s: %s", b.name, pod.Status.Phase, pod.Status.Message)
					return
				}
			} else if isNotFound(err) {
				b.exitErr = fmt.Errorf("pod %s is gone", b.name)
				return
			}
			select {
			case <-ctx.Done():
				b.exitErr = errors.New("no longer watched (torn down)")
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
}

// fill makes the data directory before the server starts, in the seed init container: the
// seed streamed in as a tar archive (or, with no seed, the dbms's init commands), the
// configuration, ownership; then it opens the gate. A seed on a host directory was restored
// on the host already (restoreHost).
func (b *box) fill(ctx context.Context, files map[string][]byte) error {
	r := b.req
	user, db := r.DBMS.User(), platform.BoxDataDir
	run := func(argv []string, stdin io.Reader) error {
		_, err := b.exec(ctx, ctrSeed, argv, stdin)
		return err
	}
	switch {
	case b.hostDir != "" && r.Seed != nil:
		// restored on the host
	case r.Seed != nil:
		if err := run([]string{"mkdir", "-p", db}, nil); err != nil {
			return err
		}
		if err := run([]string{"tar", "-x", "-C", db, "-f", "-"}, treeStream(r.Seed.Dir)); err != nil {
			return fmt.Errorf("stream the seed into the pod: %w", err)
		}
		b.facts["restore"] = "tar stream through the API (exec into the seed init container)"
	default:
		if err := run([]string{"sh", "-c", `mkdir -p "$1" && chown "$2": "$1" && chmod 700 "$1"`, "sh", db, user}, nil); err != nil {
			return err
		}
		for _, s := range r.DBMS.InitCommands(b.layout) {
			var in io.Reader
			if s.Stdin != nil {
				in = bytes.NewReader(s.Stdin)
			}
			if err := run(asUser(user, s.Argv), in); err != nil {
				return fmt.Errorf("initialise %s data directory: %w", r.DBMS.Name(), err)
			}
		}
		b.facts["restore"] = "initialised empty in the seed init container"
	}
	if len(files) > 0 {
		if err := run([]string{"tar", "-x", "-C", db, "-f", "-"}, filesStream(files)); err != nil {
			return fmt.Errorf("write the configuration into the pod: %w", err)
		}
	}
	if b.hostDir == "" || r.Seed == nil {
		if err := run([]string{"sh", "-c", `chown -R "$2": "$1" && chmod 700 "$1"`, "sh", db, user}, nil); err != nil {
			return err
		}
	}
	// Opening the gate ends the seed container (its loop sees the file within 0.1 s and exits),
	// which can end the exec'd touch before its exit is reported: exit status 137 in a cold CI
	// run under load (2026-11-27). The gate was opened when the seed container then ended well.
	err := run([]string{"touch", seedGate}, nil)
	if err != nil && b.seedEnded(ctx) {
		return nil
	}
	return err
}

// seedEnded reports whether the seed init container has ended with exit code 0, watching the
// pod for up to 15 s.
func (b *box) seedEnded(ctx context.Context) bool {
	ended := false
	_ = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		pod, err := b.cl.cs.CoreV1().Pods(b.ns).Get(ctx, b.name, getOpts)
		if err != nil {
			return false, nil // asked again until the bound
		}
		for _, st := range pod.Status.InitContainerStatuses {
			if t := st.State.Terminated; st.Name == ctrSeed && t != nil {
				ended = t.ExitCode == 0
				return true, nil
			}
		}
		return false, nil
	})
	return ended
}

// treeStream is dir's contents as a tar archive.
func treeStream(dir string) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		tw := tarball.NewWriter(pw, &tarball.Owner{})
		err := tw.Tree(dir, ".")
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// filesStream is files as a tar archive (mode 0600: they may hold the password).
func filesStream(files map[string][]byte) io.Reader {
	var buf bytes.Buffer
	tw := tarball.NewWriter(&buf, &tarball.Owner{})
	for _, n := range slices.Sorted(maps.Keys(files)) {
		_ = tw.File(n, 0o600, files[n])
	}
	_ = tw.Close()
	return &buf
}

// restoreHost fills a host-side data directory with the same cp as natively, writes the
// configuration and hands it to the server's account in the image.
func (b *box) restoreHost(ctx context.Context, seed string, files map[string][]byte) error {
	db := filepath.Join(b.hostDir, "db")
	if err := os.MkdirAll(db, 0o700); err != nil {
		return err
	}
	method, err := storage.Restore(ctx, seed, db)
	if err != nil {
		return err
	}
	b.facts["restore"] = method + " into the host directory"
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(db, name), content, 0o600); err != nil {
			return err
		}
	}
	_, err = command.Run(ctx, "chown", "-R", fmt.Sprintf("%d:%d", b.img.UID, b.img.GID), db)
	return err
}

func (b *box) Endpoint() driver.Endpoint    { return b.ep }
func (b *box) Warnings() []platform.Warning { return slices.Clone(b.warns) }
func (b *box) DataDir() string              { return b.layout.DataDir }
func (b *box) Applied() resource.Applied    { return b.applied }
func (b *box) Facts() map[string]string     { return maps.Clone(b.facts) }

// Exec runs argv as root in the server container, in the data directory. A failure is a
// *command.Error with argv, the exit status and the output.
func (b *box) Exec(ctx context.Context, argv []string) ([]byte, error) {
	in := append([]string{"sh", "-c", `cd "$1" && shift && exec "$@"`, "sh", b.layout.DataDir}, argv...)
	out, err := b.exec(ctx, ctrServer, in, nil)
	var ce *command.Error
	if errors.As(err, &ce) {
		ce.Argv = argv
	}
	return out, err
}

// exec runs argv in container c of the pod through the API (remotecommand), feeding stdin when
// it is not nil, and returns the standard output.
func (b *box) exec(ctx context.Context, c string, argv []string, stdin io.Reader) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	err := b.stream(ctx, b.name, c, argv, stdin, &stdout, &stderr)
	if err != nil {
		return stdout.Bytes(), &command.Error{Argv: argv, Output: output(&stdout, &stderr), Err: err}
	}
	return stdout.Bytes(), nil
}

func (b *box) stream(ctx context.Context, pod, c string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	req := b.cl.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(b.ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: c, Command: argv, Stdin: stdin != nil, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(b.cl.rest, "POST", req.URL())
	if err != nil {
		return err
	}
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	var ee utilexec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		return fmt.Errorf("exit status %d", ee.ExitStatus())
	}
	return err
}

func output(stdout, stderr *bytes.Buffer) string {
	if len(bytes.TrimSpace(stderr.Bytes())) > 0 {
		return command.Tail(stderr.Bytes(), command.TailBytes)
	}
	return command.Tail(stdout.Bytes(), command.TailBytes)
}

// LogTail returns the end of the server container's log (and the seed container's when the
// server has none yet).
func (b *box) LogTail(n int) string {
	b.mu.Lock()
	pod := b.pod
	b.mu.Unlock()
	if pod == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	limit := int64(n)
	for _, c := range []string{ctrServer, ctrSeed} {
		raw, err := b.cl.cs.CoreV1().Pods(b.ns).GetLogs(pod, &corev1.PodLogOptions{Container: c, LimitBytes: &limit}).DoRaw(ctx)
		if err == nil && len(bytes.TrimSpace(raw)) > 0 {
			tail, _ := b.cl.cs.CoreV1().Pods(b.ns).GetLogs(pod, &corev1.PodLogOptions{Container: c, TailLines: ptr(int64(n/40 + 20))}).DoRaw(ctx)
			return command.Tail(tail, n)
		}
	}
	return ""
}

func ptr[T any](v T) *T { return &v }

// Stop sends the database's clean-shutdown signal to the server (process 1 of its container)
// and waits for the container to end. The pod's restart policy is Never, so it stays down,
// and the keeper container keeps the volumes for Capture.
func (b *box) Stop(ctx context.Context) error {
	b.mu.Lock()
	exited := b.exited
	b.mu.Unlock()
	if exited == nil {
		return nil
	}
	select {
	case <-exited:
		return nil
	default:
	}
	if !b.serverRuns(ctx) {
		return nil // never started (a provision that failed before it), or already ended
	}
	sig := strings.TrimPrefix(signalName(b.req.DBMS), "SIG")
	if _, err := b.exec(ctx, ctrServer, []string{"sh", "-c", `kill -s "$1" 1`, "sh", sig}, nil); err != nil {
		select {
		case <-exited: // it ended meanwhile
			return nil
		default:
		}
		return fmt.Errorf("signal the server: %w", err)
	}
	select {
	case <-exited:
		return nil
	case <-time.After(stopTimeout):
		return fmt.Errorf("%s did not stop within %s of SIG%s", b.req.DBMS.Name(), stopTimeout, sig)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Capture copies the stopped server's data directory to dst: with cp from the host directory
// when there is one, otherwise as a tar stream out of the keeper container.
func (b *box) Capture(ctx context.Context, dst string) error {
	if b.hostDir != "" {
		return storage.Capture(ctx, filepath.Join(b.hostDir, "db"), dst)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		err := b.stream(ctx, b.name, ctrKeeper, []string{"tar", "-c", "-C", platform.BoxDataDir, "-f", "-", "."}, nil, pw, &stderr)
		pw.CloseWithError(err)
		done <- err
	}()
	xerr := tarball.Extract(pr, dst, 0)
	if xerr == nil {
		_, _ = io.Copy(io.Discard, pr) // the archive's end padding: the stream ends cleanly
	}
	pr.CloseWithError(io.ErrClosedPipe)
	if err := <-done; err != nil {
		return fmt.Errorf("capture the data directory through the API: %w: %s", err, command.Tail(stderr.Bytes(), 1024))
	}
	return xerr
}

// serverRuns says whether the server container runs now (true when the API cannot say: Stop
// then tries the signal).
func (b *box) serverRuns(ctx context.Context) bool {
	pod, err := b.cl.cs.CoreV1().Pods(b.ns).Get(ctx, b.name, getOpts)
	if err != nil {
		return !isNotFound(err)
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == ctrServer {
			return s.State.Running != nil
		}
	}
	return false
}
