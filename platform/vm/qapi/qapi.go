// Package qapi speaks QEMU's JSON protocol over a unix socket: to QEMU's monitor (QMP: quit,
// the vCPU threads) and to the QEMU guest agent in the guest (guest-exec and its status) over a
// virtio-serial port. Both are one JSON object per request and per reply; QMP greets and wants
// capabilities negotiated, the agent wants a sync (its reply is preceded by 0xFF) to discard
// what an earlier, interrupted conversation left in the port.
//
// Written here rather than taken from a library: the well-known Go QMP client covers the
// monitor only, and what boxbench needs of both is a few commands.
//
// A Client is safe for concurrent use: requests are serialised. A request that fails on the wire
// or is cancelled closes the connection; the next request dials again (and syncs, for the agent).
package qapi

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// Kind says which protocol a socket speaks.
type Kind int

const (
	Monitor Kind = iota // QMP
	Agent               // the guest agent
)

// Client talks to one socket.
type Client struct {
	path string
	kind Kind

	mu   sync.Mutex
	conn net.Conn
	rd   *bufio.Reader
	sync int64
}

// New returns a client of the socket at path; it dials on first use.
func New(path string, kind Kind) *Client { return &Client{path: path, kind: kind} }

// Error is an error reply: the command ran and refused.
type Error struct {
	Command string
	Class   string `json:"class"`
	Desc    string `json:"desc"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s (%s)", e.Command, e.Desc, e.Class) }

type reply struct {
	Return json.RawMessage `json:"return"`
	Error  *Error          `json:"error"`
	Event  string          `json:"event"`
	QMP    json.RawMessage `json:"QMP"`
}

// Close closes the connection (a later request dials again).
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop()
}

func (c *Client) drop() {
	if c.conn != nil {
		c.conn.Close()
		c.conn, c.rd = nil, nil
	}
}

// Do sends command with args (nil for none) and decodes the reply's return value into out
// (nil to discard it). A command that does not reply (QMP quit races the socket's close) is
// reported as the wire error.
func (c *Client) Do(ctx context.Context, command string, args, out any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.dial(ctx); err != nil {
		return err
	}
	raw, err := c.roundTrip(ctx, command, args)
	if err != nil {
		c.drop()
		return err
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: decode reply: %w", command, err)
	}
	return nil
}

func (c *Client) dial(ctx context.Context) error {
	if c.conn != nil {
		return nil
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.path)
	if err != nil {
		return err
	}
	c.conn, c.rd = conn, bufio.NewReaderSize(conn, 1<<16)
	switch c.kind {
	case Monitor:
		// The greeting, then capabilities.
		if _, err = c.read(ctx, true); err == nil {
			_, err = c.roundTrip(ctx, "qmp_capabilities", nil)
		}
	case Agent:
		err = c.agentSync(ctx)
	}
	if err != nil {
		c.drop()
		return fmt.Errorf("%s: %w", c.path, err)
	}
	return nil
}

// agentSync sends guest-sync-delimited and discards everything up to the 0xFF that precedes its
// reply, then checks the reply's id.
func (c *Client) agentSync(ctx context.Context) error {
	c.sync++
	id := time.Now().UnixNano()&0x7fffffff + c.sync
	if err := c.write(ctx, "guest-sync-delimited", map[string]any{"id": id}); err != nil {
		return err
	}
	c.deadline(ctx)
	for {
		b, err := c.rd.ReadByte()
		if err != nil {
			return err
		}
		if b == 0xFF {
			break
		}
	}
	raw, err := c.read(ctx, false)
	if err != nil {
		return err
	}
	var got int64
	if err := json.Unmarshal(raw, &got); err != nil || got != id {
		return fmt.Errorf("guest agent sync: got %s, want %d", raw, id)
	}
	return nil
}

func (c *Client) deadline(ctx context.Context) {
	if d, ok := ctx.Deadline(); ok {
		_ = c.conn.SetDeadline(d)
	} else {
		_ = c.conn.SetDeadline(time.Time{})
	}
}

func (c *Client) write(ctx context.Context, command string, args any) error {
	req := map[string]any{"execute": command}
	if args != nil {
		req["arguments"] = args
	}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	c.deadline(ctx)
	_, err = c.conn.Write(append(b, '\n'))
	return err
}

func (c *Client) roundTrip(ctx context.Context, command string, args any) (json.RawMessage, error) {
	if err := c.write(ctx, command, args); err != nil {
		return nil, fmt.Errorf("%s: %w", command, err)
	}
	raw, err := c.read(ctx, false)
	if e := (*Error)(nil); errors.As(err, &e) {
		e.Command = command
		return nil, e
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", command, err)
	}
	return raw, nil
}

// read returns the next reply's return value, skipping events (and, when greeting, returning
// at the greeting). It gives up when ctx ends: a cancelled context closes the connection.
func (c *Client) read(ctx context.Context, greeting bool) (json.RawMessage, error) {
	c.deadline(ctx)
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	for {
		line, err := c.rd.ReadBytes('\n')
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		s := strings.TrimSpace(string(line))
		if s == "" {
			continue
		}
		var r reply
		if err := json.Unmarshal([]byte(s), &r); err != nil {
			return nil, fmt.Errorf("bad reply %.200q: %w", s, err)
		}
		switch {
		case r.Error != nil:
			return nil, r.Error
		case r.QMP != nil:
			if greeting {
				return r.QMP, nil
			}
		case r.Event != "":
		default:
			return r.Return, nil
		}
	}
}

// ExecStatus is guest-exec-status's reply.
type ExecStatus struct {
	Exited       bool   `json:"exited"`
	ExitCode     int    `json:"exitcode"`
	Signal       int    `json:"signal"`
	OutData      string `json:"out-data"`
	ErrData      string `json:"err-data"`
	OutTruncated bool   `json:"out-truncated"`
	ErrTruncated bool   `json:"err-truncated"`
}

// ExecResult is a finished guest process.
type ExecResult struct {
	Stdout, Stderr []byte
	ExitCode       int // -1 when killed by a signal
	Signal         int
	Truncated      bool // the agent kept only the start of the output
}

// Exec runs argv in the guest through the agent with stdin (nil for none) and env ("K=V"),
// polling its status every poll until it exits or ctx ends. On ctx's end the guest process is
// left running: the caller decides (a box's teardown powers the guest off).
func (c *Client) Exec(ctx context.Context, argv, env []string, stdin []byte, poll time.Duration) (ExecResult, error) {
	if len(argv) == 0 {
		return ExecResult{}, errors.New("guest-exec: empty argv")
	}
	args := map[string]any{"path": argv[0], "arg": argv[1:], "capture-output": true}
	if len(env) > 0 {
		args["env"] = env
	}
	if stdin != nil {
		args["input-data"] = base64.StdEncoding.EncodeToString(stdin)
	}
	var started struct {
		PID int `json:"pid"`
	}
	if err := c.Do(ctx, "guest-exec", args, &started); err != nil {
		return ExecResult{}, err
	}
	for {
		var st ExecStatus
		if err := c.Do(ctx, "guest-exec-status", map[string]any{"pid": started.PID}, &st); err != nil {
			return ExecResult{}, err
		}
		if st.Exited {
			r := ExecResult{ExitCode: st.ExitCode, Signal: st.Signal, Truncated: st.OutTruncated || st.ErrTruncated}
			if st.Signal != 0 {
				r.ExitCode = -1
			}
			var err1, err2 error
			r.Stdout, err1 = base64.StdEncoding.DecodeString(st.OutData)
			r.Stderr, err2 = base64.StdEncoding.DecodeString(st.ErrData)
			return r, errors.Join(err1, err2)
		}
		select {
		case <-ctx.Done():
			return ExecResult{}, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// ReadFile reads a guest file through the agent (guest-file-open, -read, -close): no process is
// started in the guest. It reads at most limit bytes.
func (c *Client) ReadFile(ctx context.Context, path string, limit int) ([]byte, error) {
	var h int
	if err := c.Do(ctx, "guest-file-open", map[string]any{"path": path, "mode": "r"}, &h); err != nil {
		return nil, err
	}
	defer func() { _ = c.Do(context.WithoutCancel(ctx), "guest-file-close", map[string]any{"handle": h}, nil) }()
	var out []byte
	for len(out) < limit {
		var r struct {
			Count int    `json:"count"`
			Buf   string `json:"buf-b64"`
			EOF   bool   `json:"eof"`
		}
		if err := c.Do(ctx, "guest-file-read", map[string]any{"handle": h, "count": min(65536, limit-len(out))}, &r); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(r.Buf)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
		if r.EOF || r.Count == 0 {
			break
		}
	}
	return out, nil
}
