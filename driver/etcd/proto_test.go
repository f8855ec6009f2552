package etcd

import (
	"bytes"
	"errors"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

// The hand-written encodings must be what etcd's generated types read (the field numbers of
// rpc.proto), and the decoders must read what they write.

func TestEncodeRange(t *testing.T) {
	var got pb.RangeRequest
	if err := got.Unmarshal(appendRange(nil, []byte("t/k/"), []byte("t/k0"), 30)); err != nil {
		t.Fatal(err)
	}
	if string(got.Key) != "t/k/" || string(got.RangeEnd) != "t/k0" || got.Limit != 30 || got.Serializable ||
		got.SortOrder != pb.RangeRequest_NONE || got.KeysOnly || got.CountOnly {
		t.Errorf("RangeRequest = %+v", got)
	}
	got.Reset()
	if err := got.Unmarshal(appendRange(nil, []byte("k"), nil, 0)); err != nil || string(got.Key) != "k" || got.RangeEnd != nil || got.Limit != 0 {
		t.Errorf("RangeRequest of one key = %+v, %v", got, err)
	}
}

func TestEncodePutDeleteAuth(t *testing.T) {
	var put pb.PutRequest
	if err := put.Unmarshal(appendPut(nil, []byte("t/k/FIELD3"), []byte("value"))); err != nil ||
		string(put.Key) != "t/k/FIELD3" || string(put.Value) != "value" || put.PrevKv || put.Lease != 0 {
		t.Errorf("PutRequest = %+v, %v", put, err)
	}
	var del pb.DeleteRangeRequest
	if err := del.Unmarshal(appendDeleteRange(nil, []byte("t/"), []byte("t0"))); err != nil ||
		string(del.Key) != "t/" || string(del.RangeEnd) != "t0" {
		t.Errorf("DeleteRangeRequest = %+v, %v", del, err)
	}
	var auth pb.AuthenticateRequest
	if err := auth.Unmarshal(appendAuthenticate(nil, "root", "s3cret")); err != nil || auth.Name != "root" || auth.Password != "s3cret" {
		t.Errorf("AuthenticateRequest = %+v, %v", auth, err)
	}
}

func TestEncodeTxn(t *testing.T) {
	fields := []string{"FIELD0", "FIELD1", "FIELD2"}
	// the second value is large enough that its length takes two varint bytes; the third is
	// empty (proto3 omits it)
	vals := [][]byte{[]byte("a"), bytes.Repeat([]byte{'b'}, 300), nil}
	var b []byte
	size := 0
	for i, f := range fields {
		b = appendTxnPut(b, []byte("t/k/"), f, vals[i])
		size += txnPutSize(len("t/k/")+len(f), len(vals[i]))
	}
	if size != len(b) {
		t.Errorf("txnPutSize sums to %d, encoded %d bytes", size, len(b))
	}
	var txn pb.TxnRequest
	if err := txn.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	if len(txn.Compare) != 0 || len(txn.Failure) != 0 || len(txn.Success) != 3 {
		t.Fatalf("TxnRequest = %+v", txn)
	}
	for i, op := range txn.Success {
		p := op.GetRequestPut()
		if p == nil || string(p.Key) != "t/k/"+fields[i] || !bytes.Equal(p.Value, vals[i]) {
			t.Errorf("success[%d] = %+v", i, op)
		}
	}
}

func TestDecodeReplies(t *testing.T) {
	rr := pb.RangeResponse{Header: &pb.ResponseHeader{ClusterId: 1, MemberId: 2, Revision: 99, RaftTerm: 3},
		Kvs:  []*mvccpb.KeyValue{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("b")}, {Key: []byte("c"), Value: []byte("3")}},
		More: true, Count: 7}
	m, err := rr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := countField(m, fRangeRespKvs); n != 3 || err != nil {
		t.Errorf("countField(kvs) = %d, %v, want 3", n, err)
	}
	empty, _ := (&pb.RangeResponse{Header: rr.Header}).Marshal()
	if n, err := countField(empty, fRangeRespKvs); n != 0 || err != nil {
		t.Errorf("countField(no kvs) = %d, %v", n, err)
	}
	if _, err := countField(m[:len(m)-1], fRangeRespKvs); !errors.Is(err, errMalformed) {
		t.Errorf("truncated reply: %v, want errMalformed", err)
	}
	ar, _ := (&pb.AuthenticateResponse{Header: rr.Header, Token: "tok.42"}).Marshal()
	if tok, err := bytesField(ar, fAuthRespToken); string(tok) != "tok.42" || err != nil {
		t.Errorf("token = %q, %v", tok, err)
	}
	if _, err := bytesField([]byte{0x12, 0x05, 'a'}, fAuthRespToken); !errors.Is(err, errMalformed) {
		t.Errorf("short token: %v, want errMalformed", err)
	}
}

func TestStatusErrors(t *testing.T) {
	e := newStatusError(16, []byte("etcdserver: invalid auth token"))
	if !needsAuth(e) || e.Error() != "etcd: rpc error: code = Unauthenticated desc = etcdserver: invalid auth token" {
		t.Errorf("%v: needsAuth %v", e, needsAuth(e))
	}
	if e := newStatusError(3, []byte("etcdserver: revision of auth store is old")); !needsAuth(e) {
		t.Errorf("%v should re-authenticate", e)
	}
	if e := newStatusError(3, []byte("etcdserver:%20authentication%20failed%2C%20invalid%20user%20ID%20or%20password")); needsAuth(e) ||
		e.Message != "etcdserver: authentication failed, invalid user ID or password" || !isAuthFailure(e) {
		t.Errorf("%v: needsAuth %v, auth failure %v", e, needsAuth(e), isAuthFailure(e))
	}
	if needsAuth(errors.New("etcdserver: invalid auth token")) {
		t.Error("a plain error is not a status")
	}
}
