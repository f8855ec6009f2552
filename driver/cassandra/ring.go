package cassandra

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/boxbench/boxbench/driver/cassandra/cql"
)

// ring maps a token to the node that owns it: the node whose token is the first at or after
// it, wrapping around (Cassandra's token ring; each node owns num_tokens ranges). That node
// is a replica of the key under every replication strategy (the first of its replicas); the
// others follow it on the ring.
type ring struct {
	tokens []int64 // sorted
	owner  []int   // node index (into DB.nodes) of each token
}

// vnode is one token of one node.
type vnode struct {
	token int64
	node  int
}

// newRing builds the ring from every node's tokens.
func newRing(vs []vnode) (*ring, error) {
	slices.SortFunc(vs, func(a, b vnode) int {
		switch {
		case a.token < b.token:
			return -1
		case a.token > b.token:
			return 1
		}
		return 0
	})
	r := &ring{tokens: make([]int64, len(vs)), owner: make([]int, len(vs))}
	for i, v := range vs {
		if i > 0 && v.token == vs[i-1].token {
			return nil, fmt.Errorf("token %d is claimed by two nodes (%d and %d)", v.token, vs[i-1].node, v.node)
		}
		r.tokens[i], r.owner[i] = v.token, v.node
	}
	return r, nil
}

// node returns the node that owns key (0 when the ring is empty: one node).
func (r *ring) node(key string) int {
	if len(r.tokens) == 0 {
		return 0
	}
	t := cql.Token(key)
	i, _ := slices.BinarySearch(r.tokens, t)
	if i == len(r.tokens) {
		i = 0
	}
	return r.owner[i]
}

// nodeTokens reads the tokens a node owns (system.local's tokens, a set<text> of decimal
// tokens) from the result in c.body.
func nodeTokens(c *conn, node int) ([]vnode, error) {
	r := cql.Reader{B: c.body}
	if k := r.Int(); k != cql.ResultRows {
		return nil, fmt.Errorf("%w: result kind %d for system.local", cql.ErrProtocol, k)
	}
	cols, rows, err := cql.Rows(&r)
	if err != nil {
		return nil, err
	}
	if cols != 1 || rows != 1 {
		return nil, fmt.Errorf("system.local: %d rows of %d columns, want 1 of 1", rows, cols)
	}
	var vs []vnode
	var perr error
	err = cql.Collection(r.Bytes(), func(b []byte) {
		t, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil && perr == nil {
			perr = fmt.Errorf("system.local tokens: %q is not a Murmur3 token (is the partitioner Murmur3Partitioner?)", b)
		}
		vs = append(vs, vnode{t, node})
	})
	if err == nil {
		err = r.Err
	}
	if err == nil {
		err = perr
	}
	return vs, err
}
