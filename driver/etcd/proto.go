package etcd

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The messages of etcd's KV and Auth services the driver sends and reads, encoded and decoded
// by hand with protowire on reused buffers. Field numbers are those of etcd's
// api/v3/etcdserverpb/rpc.proto (v3.5; unchanged since v3.0, and the same in the 3.4 server
// Debian ships): a test checks each encoding against the generated etcdserverpb types.
const (
	// RangeRequest
	fRangeKey      protowire.Number = 1
	fRangeRangeEnd protowire.Number = 2
	fRangeLimit    protowire.Number = 3
	// RangeResponse
	fRangeRespKvs protowire.Number = 2
	// PutRequest
	fPutKey   protowire.Number = 1
	fPutValue protowire.Number = 2
	// DeleteRangeRequest
	fDelKey      protowire.Number = 1
	fDelRangeEnd protowire.Number = 2
	// TxnRequest: repeated RequestOp success = 2; RequestOp: PutRequest request_put = 2
	fTxnSuccess      protowire.Number = 2
	fRequestOpPut    protowire.Number = 2
	fAuthName        protowire.Number = 1
	fAuthPassword    protowire.Number = 2
	fAuthRespToken   protowire.Number = 2
	grpcPrefixLength                  = 5 // compressed flag (1 byte) + message length (4, big endian)
)

var errMalformed = errors.New("etcd: malformed protobuf reply")

// appendBytesField appends field n (length-delimited) when b is not empty, as proto3 does.
func appendBytesField(b []byte, n protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendRange appends a RangeRequest (linearizable: serializable stays false; keys in byte
// order, etcd's default sort).
func appendRange(b, key, end []byte, limit int64) []byte {
	b = appendBytesField(b, fRangeKey, key)
	b = appendBytesField(b, fRangeRangeEnd, end)
	if limit != 0 {
		b = protowire.AppendTag(b, fRangeLimit, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(limit))
	}
	return b
}

// appendPut appends a PutRequest.
func appendPut(b, key, value []byte) []byte {
	b = appendBytesField(b, fPutKey, key)
	return appendBytesField(b, fPutValue, value)
}

// putSize is the encoded size of a PutRequest with a key of k bytes and a value of v bytes.
func putSize(k, v int) int {
	n := 0
	if k > 0 {
		n += 1 + protowire.SizeBytes(k)
	}
	if v > 0 {
		n += 1 + protowire.SizeBytes(v)
	}
	return n
}

// appendTxnPut appends one element of a TxnRequest's success list: a RequestOp holding a
// PutRequest of the key prefix+field and value.
func appendTxnPut(b, prefix []byte, field string, value []byte) []byte {
	k := len(prefix) + len(field)
	ps := putSize(k, len(value))
	b = protowire.AppendTag(b, fTxnSuccess, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(1+protowire.SizeBytes(ps)))
	b = protowire.AppendTag(b, fRequestOpPut, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(ps))
	b = protowire.AppendTag(b, fPutKey, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(k))
	b = append(b, prefix...)
	b = append(b, field...)
	return appendBytesField(b, fPutValue, value)
}

// txnPutSize is the size appendTxnPut appends.
func txnPutSize(k, v int) int {
	ps := putSize(k, v)
	op := 1 + protowire.SizeBytes(ps)
	return 1 + protowire.SizeBytes(op)
}

// appendDeleteRange appends a DeleteRangeRequest.
func appendDeleteRange(b, key, end []byte) []byte {
	b = appendBytesField(b, fDelKey, key)
	return appendBytesField(b, fDelRangeEnd, end)
}

// appendAuthenticate appends an AuthenticateRequest.
func appendAuthenticate(b []byte, name, password string) []byte {
	b = appendBytesField(b, fAuthName, []byte(name))
	return appendBytesField(b, fAuthPassword, []byte(password))
}

// countField returns how many times field n occurs at the top level of message m (a
// RangeResponse's kvs), checking that m is well formed.
func countField(m []byte, n protowire.Number) (int, error) {
	count := 0
	for len(m) > 0 {
		num, typ, l := protowire.ConsumeTag(m)
		if l < 0 {
			return 0, fmt.Errorf("%w: %v", errMalformed, protowire.ParseError(l))
		}
		m = m[l:]
		l = protowire.ConsumeFieldValue(num, typ, m)
		if l < 0 {
			return 0, fmt.Errorf("%w: %v", errMalformed, protowire.ParseError(l))
		}
		if num == n {
			count++
		}
		m = m[l:]
	}
	return count, nil
}

// bytesField returns the last value of length-delimited field n at the top level of m (an
// AuthenticateResponse's token), or nil.
func bytesField(m []byte, n protowire.Number) ([]byte, error) {
	var v []byte
	for len(m) > 0 {
		num, typ, l := protowire.ConsumeTag(m)
		if l < 0 {
			return nil, fmt.Errorf("%w: %v", errMalformed, protowire.ParseError(l))
		}
		m = m[l:]
		if num == n && typ == protowire.BytesType {
			b, l := protowire.ConsumeBytes(m)
			if l < 0 {
				return nil, fmt.Errorf("%w: %v", errMalformed, protowire.ParseError(l))
			}
			v, m = b, m[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(num, typ, m)
		if l < 0 {
			return nil, fmt.Errorf("%w: %v", errMalformed, protowire.ParseError(l))
		}
		m = m[l:]
	}
	return v, nil
}
