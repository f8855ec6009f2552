package etcd

import (
	"fmt"
	"net/url"
	"strings"
)

// StatusError is a call that ended with a grpc-status other than OK: Code is gRPC's status
// code (google.golang.org/grpc/codes numbering), Message the server's grpc-message, decoded.
type StatusError struct {
	Code    int
	Message string
}

// gRPC status codes the driver tells apart.
const (
	codeInvalidArgument = 3
	codeUnavailable     = 14
	codeUnauthenticated = 16
)

var codeNames = [...]string{"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded",
	"NotFound", "AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
	"Aborted", "OutOfRange", "Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated"}

func (e *StatusError) Error() string {
	name := fmt.Sprintf("Code(%d)", e.Code)
	if e.Code >= 0 && e.Code < len(codeNames) {
		name = codeNames[e.Code]
	}
	return fmt.Sprintf("etcd: rpc error: code = %s desc = %s", name, e.Message)
}

// newStatusError decodes grpc-message (percent-encoded, gRPC's HTTP/2 mapping).
func newStatusError(code int, msg []byte) *StatusError {
	m := string(msg)
	if strings.IndexByte(m, '%') >= 0 {
		if u, err := url.PathUnescape(m); err == nil {
			m = u
		}
	}
	return &StatusError{Code: code, Message: m}
}

// needsAuth says err is etcd's answer to a token it no longer accepts (expired simple token,
// restarted member) or to an auth store that changed: clientv3 re-authenticates and retries
// on the same two.
func needsAuth(err error) bool {
	se, ok := err.(*StatusError)
	if !ok {
		return false
	}
	return (se.Code == codeUnauthenticated && strings.Contains(se.Message, "invalid auth token")) ||
		(se.Code == codeInvalidArgument && strings.Contains(se.Message, "revision of auth store is old"))
}
