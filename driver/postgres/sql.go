package postgres

import (
	"fmt"
	"sync/atomic"

	"github.com/boxbench/boxbench/driver/internal/sqltable"
)

// stmt is one SQL statement the driver prepares on each connection that runs it, under the
// name in its Prep (unique in the pool, so a connection can hold the statements of several
// tables). stmts builds and caches them; PostgreSQL's markers are numbered ("$1").
type (
	stmt  = sqltable.Stmt[string]
	stmts = sqltable.Table[string]
)

func newStmts(table string, seq *atomic.Int64) *stmts {
	return sqltable.New(table, sqltable.Numbered, func(st *stmt) {
		st.Prep = fmt.Sprintf("boxbench_%d", seq.Add(1))
	})
}
