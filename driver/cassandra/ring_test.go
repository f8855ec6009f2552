package cassandra

import "testing"

// TestRing: a key goes to the node whose token is the first at or after the key's token,
// wrapping past the last (the keys' tokens are the server's, see cql.TestToken).
func TestRing(t *testing.T) {
	r, err := newRing([]vnode{{5e18, 2}, {-2e18, 0}, {4e17, 1}, {-1727604350198519072, 3}})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int{
		"user1":                   3, // -1727604350198519072: a node's own token is its own
		"qxelégnuépwdé":           1, // 346237156541772039
		"ü":                       2, // 2039338041252279364
		"user6284781860667377211": 2, // 4844203595558397365
		"jqxeézgn":                0, // 9037967314014726851: past the last token, wraps
		"日本語のキー":                  0, // -6915128621077656969
	} {
		if got := r.node(key); got != want {
			t.Errorf("%q: node %d, want %d", key, got, want)
		}
	}
	if _, err := newRing([]vnode{{1, 0}, {1, 1}}); err == nil {
		t.Error("a token claimed twice was accepted")
	}
	if got := (&ring{}).node("user1"); got != 0 {
		t.Errorf("one node: %d", got)
	}
}
