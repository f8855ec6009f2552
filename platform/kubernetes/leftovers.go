package kubernetes

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Leftovers: platform.LeftoverLister. The objects of experiment exp (its annotation, or its
// label) among those labelled boxbench=1 — pods, services and claims in any namespace,
// persistent volumes, namespaces — in the default cluster and in every one of
// kubernetes.clusters, as CleanupBoxes finds them. With no kubeconfig there is no cluster.
func (p *Platform) Leftovers(ctx context.Context, _, exp string) ([]string, error) {
	var left []string
	var errs []error
	for _, name := range append([]string{""}, p.config().ClusterNames()...) {
		l, err := p.clusterLeftovers(ctx, name, exp)
		left, errs = append(left, l...), append(errs, err)
	}
	return left, errors.Join(errs...)
}

func (p *Platform) clusterLeftovers(ctx context.Context, name, exp string) ([]string, error) {
	cl, err := p.connect(name)
	if err != nil {
		if cfg, _ := p.config().of(name); !exists(kubeconfigPath(cfg)) {
			return nil, nil
		}
		return nil, err
	}
	sel := metav1.ListOptions{LabelSelector: LabelBoxbench + "=1"}
	core := cl.cs.CoreV1()
	var left []string
	var errs []error
	add := func(kind string, err error, metas ...metav1.ObjectMeta) {
		if err != nil {
			errs = append(errs, fmt.Errorf("list %ss: %w", kind, err))
		}
		for _, m := range metas {
			if experimentOf(m) != exp {
				continue
			}
			where := m.Name
			if m.Namespace != "" {
				where = m.Namespace + "/" + m.Name
			}
			left = append(left, kind+" "+where)
		}
	}
	if l, err := core.Pods("").List(ctx, sel); err != nil {
		add("pod", err)
	} else {
		add("pod", nil, metas(l.Items, func(i int) metav1.ObjectMeta { return l.Items[i].ObjectMeta })...)
	}
	if l, err := core.Services("").List(ctx, sel); err != nil {
		add("service", err)
	} else {
		add("service", nil, metas(l.Items, func(i int) metav1.ObjectMeta { return l.Items[i].ObjectMeta })...)
	}
	if l, err := core.PersistentVolumeClaims("").List(ctx, sel); err != nil {
		add("claim", err)
	} else {
		add("claim", nil, metas(l.Items, func(i int) metav1.ObjectMeta { return l.Items[i].ObjectMeta })...)
	}
	if l, err := core.PersistentVolumes().List(ctx, sel); err != nil {
		add("persistent volume", err)
	} else {
		add("persistent volume", nil, metas(l.Items, func(i int) metav1.ObjectMeta { return l.Items[i].ObjectMeta })...)
	}
	if l, err := core.Namespaces().List(ctx, sel); err != nil {
		add("namespace", err)
	} else {
		add("namespace", nil, metas(l.Items, func(i int) metav1.ObjectMeta { return l.Items[i].ObjectMeta })...)
	}
	if err := errors.Join(errs...); err != nil {
		return left, fmt.Errorf("cluster %s: %w", cl.kubeconfig, err)
	}
	return left, nil
}

func metas[T any](items []T, meta func(int) metav1.ObjectMeta) []metav1.ObjectMeta {
	out := make([]metav1.ObjectMeta, len(items))
	for i := range items {
		out[i] = meta(i)
	}
	return out
}
