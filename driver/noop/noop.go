// Package noop is a driver that does nothing. It exists to measure the generator itself: with
// it, a benchmark times key choice, value generation and recording, and nothing else.
package noop

import (
	"context"

	"github.com/boxbench/boxbench/driver"
)

// DB accepts every operation and stores nothing. The zero value is ready to use.
type DB struct{}

var _ driver.DB = DB{}

// New returns a DB; its arguments are ignored, so that it has the same signature as the real
// drivers' constructors.
func New(context.Context, driver.Endpoint, driver.Credentials, int) (driver.DB, error) {
	return DB{}, nil
}

func (DB) Setup(context.Context, driver.Table) error                         { return nil }
func (DB) Read(context.Context, string, []string) error                      { return nil }
func (DB) Scan(context.Context, string, int, []string) error                 { return nil }
func (DB) Update(context.Context, string, []string, [][]byte) error          { return nil }
func (DB) Insert(context.Context, string, []string, [][]byte) error          { return nil }
func (DB) BatchInsert(context.Context, []string, []string, [][][]byte) error { return nil }
func (DB) Close() error                                                      { return nil }
