package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
)

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// Teardown stops the server, deletes the pod, service, claim, volume and (when it is the box's
// own) namespace, waits until the API no longer has any of them, then removes the host storage
// and the work directory. Idempotent; every step runs even when an earlier one failed.
func (b *box) Teardown(ctx context.Context) error {
	if !b.down.CompareAndSwap(false, true) {
		return nil
	}
	ctx, cancel := platform.TeardownContext(ctx)
	defer cancel()
	var errs []error
	if b.cl != nil {
		errs = append(errs, platform.StopBeforeTeardown(ctx, b.Stop, 20*time.Second))
	}
	b.mu.Lock()
	if b.stopWatch != nil {
		b.stopWatch()
	}
	pod, svc, pvc, pv := b.pod, b.svc, b.pvc, b.pv
	b.mu.Unlock()
	if b.cl != nil {
		errs = append(errs, b.cl.deleteObjects(ctx, b.ns, b.ownNS, pod, svc, pvc, pv))
	}
	if b.store != nil {
		errs = append(errs, b.store.Release(ctx))
	}
	if storage.IsMountPoint(filepath.Join(b.req.WorkDir, "data")) {
		errs = append(errs, fmt.Errorf("not removing %s: its storage is still mounted", b.req.WorkDir))
	} else {
		errs = append(errs, os.RemoveAll(b.req.WorkDir))
	}
	return errors.Join(errs...)
}

// deleteObjects deletes the named objects of one box ("" = none) and waits until they are gone.
// The pod goes first and at once (grace 0: the server was stopped, or is being torn down).
func (c *cluster) deleteObjects(ctx context.Context, ns string, ownNS bool, pod, svc, pvc, pv string) error {
	var errs []error
	core := c.cs.CoreV1()
	zero := int64(0)
	now := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	type obj struct {
		kind, name string
		del        func() error
		get        func() error
	}
	objs := []obj{
		{"pod", pod, func() error { return core.Pods(ns).Delete(ctx, pod, now) }, func() error { _, err := core.Pods(ns).Get(ctx, pod, getOpts); return err }},
		{"service", svc, func() error { return core.Services(ns).Delete(ctx, svc, metav1.DeleteOptions{}) }, func() error { _, err := core.Services(ns).Get(ctx, svc, getOpts); return err }},
		{"claim", pvc, func() error { return core.PersistentVolumeClaims(ns).Delete(ctx, pvc, metav1.DeleteOptions{}) }, func() error { _, err := core.PersistentVolumeClaims(ns).Get(ctx, pvc, getOpts); return err }},
		{"persistent volume", pv, func() error { return core.PersistentVolumes().Delete(ctx, pv, metav1.DeleteOptions{}) }, func() error { _, err := core.PersistentVolumes().Get(ctx, pv, getOpts); return err }},
	}
	if ownNS {
		objs = append(objs, obj{"namespace", ns, func() error { return core.Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}) }, func() error { _, err := core.Namespaces().Get(ctx, ns, getOpts); return err }})
	}
	for _, o := range objs {
		if o.name == "" {
			continue
		}
		if err := o.del(); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s %s: %w", o.kind, o.name, err))
			continue
		}
		if err := waitGone(ctx, o.get); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", o.kind, o.name, err))
		}
	}
	return errors.Join(errs...)
}

// waitGone polls get until it says not found.
func waitGone(ctx context.Context, get func() error) error {
	for {
		err := get()
		if isNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("still there (last: %v): %w", err, ctx.Err())
			}
			return fmt.Errorf("still there: %w", ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Cleanup removes what crashed experiments left in the cluster, then under workRoot.
func (p *Platform) Cleanup(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	return platform.CleanupWith(ctx, p, workRoot, crashed)
}

// CleanupBoxes deletes every object labelled boxbench=1 whose experiment crashed: pods,
// services and claims in any namespace, persistent volumes, and the boxes' own namespaces;
// and waits until they are gone; in the default cluster and in every one of kubernetes.clusters.
// With no kubeconfig at all there is no cluster to clean.
func (p *Platform) CleanupBoxes(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	var done []string
	var errs []error
	for _, name := range append([]string{""}, p.config().ClusterNames()...) {
		d, err := p.cleanupCluster(ctx, name, crashed)
		done, errs = append(done, d...), append(errs, err)
	}
	return done, errors.Join(errs...)
}

func (p *Platform) cleanupCluster(ctx context.Context, name string, crashed func(string) bool) ([]string, error) {
	cl, err := p.connect(name)
	if err != nil {
		if cfg, _ := p.config().of(name); !exists(kubeconfigPath(cfg)) {
			return nil, nil
		}
		return nil, err
	}
	if _, err := p.reach(ctx, name); err != nil {
		// Leftovers in a cluster that does not answer cannot be removed now; the other
		// platforms' cleanup goes on.
		p.log.Warn("kubernetes: leftovers of crashed experiments (if any) not removed", "err", err)
		return nil, nil
	}
	sel := metav1.ListOptions{LabelSelector: LabelBoxbench + "=1"}
	core := cl.cs.CoreV1()
	var done []string
	var errs []error
	note := func(kind, ns, name string, m metav1.ObjectMeta, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		where := name
		if ns != "" {
			where = ns + "/" + name
		}
		done = append(done, fmt.Sprintf("%s %s (experiment %s)", kind, where, experimentOf(m)))
	}
	pods, err := core.Pods("").List(ctx, sel)
	errs = append(errs, err)
	if pods != nil {
		for _, o := range pods.Items {
			if e := experimentOf(o.ObjectMeta); e != "" && crashed(e) {
				note("pod", o.Namespace, o.Name, o.ObjectMeta, cl.deleteObjects(ctx, o.Namespace, false, o.Name, "", "", ""))
			}
		}
	}
	svcs, err := core.Services("").List(ctx, sel)
	errs = append(errs, err)
	if svcs != nil {
		for _, o := range svcs.Items {
			if e := experimentOf(o.ObjectMeta); e != "" && crashed(e) {
				note("service", o.Namespace, o.Name, o.ObjectMeta, cl.deleteObjects(ctx, o.Namespace, false, "", o.Name, "", ""))
			}
		}
	}
	pvcs, err := core.PersistentVolumeClaims("").List(ctx, sel)
	errs = append(errs, err)
	if pvcs != nil {
		for _, o := range pvcs.Items {
			if e := experimentOf(o.ObjectMeta); e != "" && crashed(e) {
				note("claim", o.Namespace, o.Name, o.ObjectMeta, cl.deleteObjects(ctx, o.Namespace, false, "", "", o.Name, ""))
			}
		}
	}
	pvs, err := core.PersistentVolumes().List(ctx, sel)
	errs = append(errs, err)
	if pvs != nil {
		for _, o := range pvs.Items {
			if e := experimentOf(o.ObjectMeta); e != "" && crashed(e) {
				note("persistent volume", "", o.Name, o.ObjectMeta, cl.deleteObjects(ctx, "", false, "", "", "", o.Name))
			}
		}
	}
	nss, err := core.Namespaces().List(ctx, sel)
	errs = append(errs, err)
	if nss != nil {
		for _, o := range nss.Items {
			// Only a namespace a box made for itself (its name is its box's name).
			if e := experimentOf(o.ObjectMeta); e != "" && crashed(e) && o.Labels[LabelBox] == o.Name && strings.HasPrefix(o.Name, "bb-") {
				note("namespace", "", o.Name, o.ObjectMeta, cl.deleteObjects(ctx, o.Name, true, "", "", "", ""))
			}
		}
	}
	return done, errors.Join(errs...)
}
