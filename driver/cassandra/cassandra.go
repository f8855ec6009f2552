// Package cassandra drives Apache Cassandra (`dbms: cassandra`) over CQL through gocql (the
// Apache Cassandra Go driver, github.com/apache/cassandra-gocql-driver/v2), in the data model
// of YCSB's Cassandra binding: keyspace ycsb, one table whose partition key is y_id varchar and
// whose other columns are field0..n varchar.
//
//   - read: SELECT <fields> FROM t WHERE y_id = ? (all columns when fields is nil); no row is
//     ErrNotFound.
//   - scan: SELECT <fields> FROM t WHERE token(y_id) >= token(?) LIMIT ?, YCSB's scan: in token
//     (hash) order, not key order, so a scan from a key past the last one still finds rows.
//   - update: UPDATE t SET f = ?, … WHERE y_id = ?; insert: INSERT INTO t (y_id, f…) VALUES
//     (?, …). Both are upserts in CQL, as in YCSB's binding (no lightweight transactions).
//   - batch insert: the records' inserts in flight at once (a CQL batch over many partitions
//     is an anti-pattern Cassandra warns about and, over 50 KiB, refuses).
//
// Every statement is prepared (gocql prepares a statement with bind values once per connection
// and executes it by id) and runs at the configured consistency level (ONE by default, as in
// YCSB). gocql allocates on every operation (its query and frame objects, the boxed bind
// values): BenchmarkOps reports how much, docs/performance.md the client CPU it costs.
package cassandra

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

// Consistencies are the consistency levels a spec may name.
var Consistencies = []string{"ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE"}

// DB is the driver's session (a pool of connections). Safe for concurrent use.
type DB struct {
	s      *gocql.Session
	cl     gocql.Consistency
	ks     string
	rf     int // the keyspace's replication factor
	st     atomic.Pointer[stmts]
	closed atomic.Bool
	once   sync.Once
}

var _ driver.DB = (*DB)(nil)

// New connects to ep with up to poolSize connections at consistency ONE and checks the server
// answers; ctx bounds the check.
func New(ctx context.Context, ep driver.Endpoint, cred dbms.Credentials, poolSize int) (driver.DB, error) {
	return Open(ctx, ep, cred, poolSize, Options{})
}

// Options are what a spec says about the client's keyspace and operations.
type Options struct {
	// Consistency is every operation's consistency level (one of Consistencies; "" = ONE).
	Consistency string
	// ReplicationFactor is the keyspace's (SimpleStrategy) when Setup creates it; 0 = 1, a
	// single node's.
	ReplicationFactor int
}

// Opener returns a constructor that uses o.
func Opener(o Options) func(context.Context, driver.Endpoint, dbms.Credentials, int) (driver.DB, error) {
	return func(ctx context.Context, ep driver.Endpoint, cred dbms.Credentials, poolSize int) (driver.DB, error) {
		return Open(ctx, ep, cred, poolSize, o)
	}
}

// Open is New with options.
func Open(ctx context.Context, ep driver.Endpoint, cred dbms.Credentials, poolSize int, o Options) (driver.DB, error) {
	consistency := o.Consistency
	cl := gocql.One
	if consistency != "" {
		c, err := gocql.ParseConsistencyWrapper(strings.ToUpper(consistency))
		if err != nil {
			return nil, fmt.Errorf("cassandra: consistency %q (valid: %s)", consistency, strings.Join(Consistencies, ", "))
		}
		cl = c
	}
	if ep.Unix != "" {
		return nil, errors.New("cassandra: CQL has no unix socket")
	}
	c := dbms.CQLCluster(ep, cred)
	c.NumConns = max(1, poolSize)
	c.Consistency = cl
	s, err := c.CreateSession()
	if err != nil {
		return nil, fmt.Errorf("cassandra %s: %w", ep, err)
	}
	ks := cred.Database
	if ks == "" {
		ks = dbms.CassandraKeyspace
	}
	db := &DB{s: s, cl: cl, ks: ks, rf: max(1, o.ReplicationFactor)}
	db.st.Store(newStmts(ks, driver.Table{Name: "usertable", FieldCount: 10}))
	var v string
	if err := s.Query("SELECT release_version FROM system.local").ScanContext(ctx, &v); err != nil {
		db.Close()
		return nil, fmt.Errorf("cassandra %s: %w", ep, err)
	}
	return db, nil
}

var ident = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,47}$`)

// column is a driver field name (FIELD3) as the table's column (field3: CQL folds unquoted
// names to lower case, as YCSB's binding writes them).
func column(f string) string { return strings.ToLower(f) }

// stmts are one table's statements, built once: all fields, or one field, the generator's
// cases (readallfields / writeallfields true or false); other field sets are built per call.
type stmts struct {
	table                string
	fields               []string
	readAll, scanAll     string
	insertAll, updateAll string
	readOne, scanOne     map[string]string
	updateOne            map[string]string
}

func newStmts(ks string, t driver.Table) *stmts {
	s := &stmts{table: ks + "." + strings.ToLower(t.Name), fields: t.Fields(),
		readOne: map[string]string{}, scanOne: map[string]string{}, updateOne: map[string]string{}}
	s.readAll, s.scanAll = s.read(nil), s.scan(nil)
	s.insertAll, s.updateAll = s.insert(s.fields), s.update(s.fields)
	for _, f := range s.fields {
		s.readOne[f], s.scanOne[f], s.updateOne[f] = s.read([]string{f}), s.scan([]string{f}), s.update([]string{f})
	}
	return s
}

func projection(fields []string) string {
	if fields == nil {
		return "*"
	}
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = column(f)
	}
	return strings.Join(cols, ", ")
}

func (s *stmts) read(fields []string) string {
	return "SELECT " + projection(fields) + " FROM " + s.table + " WHERE y_id = ?"
}
func (s *stmts) scan(fields []string) string {
	return "SELECT " + projection(fields) + " FROM " + s.table + " WHERE token(y_id) >= token(?) LIMIT ?"
}
func (s *stmts) insert(fields []string) string {
	return "INSERT INTO " + s.table + " (y_id, " + projection(fields) + ") VALUES (?" + strings.Repeat(", ?", len(fields)) + ")"
}
func (s *stmts) update(fields []string) string {
	sets := make([]string, len(fields))
	for i, f := range fields {
		sets[i] = column(f) + " = ?"
	}
	return "UPDATE " + s.table + " SET " + strings.Join(sets, ", ") + " WHERE y_id = ?"
}

// pick returns the prebuilt statement for fields, or builds one.
func (s *stmts) pick(fields []string, all string, one map[string]string, build func([]string) string) string {
	switch {
	case fields == nil || len(fields) > 0 && len(fields) == len(s.fields) && fields[0] == s.fields[0]:
		return all
	case len(fields) == 1:
		if q, ok := one[fields[0]]; ok {
			return q
		}
	}
	return build(fields)
}

// UseTable names the table the following operations use; Setup does it too.
func (db *DB) UseTable(t driver.Table) { db.st.Store(newStmts(db.ks, t)) }

// Setup creates YCSB's keyspace (SimpleStrategy with Options.ReplicationFactor replicas: one
// on a single node) if it is missing, and the table, empty.
func (db *DB) Setup(ctx context.Context, t driver.Table) error {
	name := strings.ToLower(t.Name)
	if !ident.MatchString(name) || !ident.MatchString(db.ks) {
		return fmt.Errorf("cassandra: table %q or keyspace %q is not a CQL identifier ([a-z_][a-z0-9_]*, at most 48)", t.Name, db.ks)
	}
	cols := make([]string, 0, t.FieldCount+1)
	cols = append(cols, "y_id varchar PRIMARY KEY")
	for _, f := range t.Fields() {
		cols = append(cols, column(f)+" varchar")
	}
	for _, q := range []string{
		"CREATE KEYSPACE IF NOT EXISTS " + db.ks + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': " + strconv.Itoa(db.rf) + "}",
		"DROP TABLE IF EXISTS " + db.ks + "." + name,
		"CREATE TABLE " + db.ks + "." + name + " (" + strings.Join(cols, ", ") + ")",
	} {
		if err := db.s.Query(q).Consistency(gocql.All).ExecContext(ctx); err != nil {
			return db.wrap(ctx, err)
		}
	}
	db.UseTable(t)
	return nil
}

func (db *DB) Read(ctx context.Context, key string, fields []string) error {
	st := db.st.Load()
	return db.rows(ctx, db.s.Query(st.pick(fields, st.readAll, st.readOne, st.read), key))
}

func (db *DB) Scan(ctx context.Context, key string, count int, fields []string) error {
	st := db.st.Load()
	return db.rows(ctx, db.s.Query(st.pick(fields, st.scanAll, st.scanOne, st.scan), key, count).PageSize(count))
}

// rows runs q and reads its first page; no row is ErrNotFound.
func (db *DB) rows(ctx context.Context, q *gocql.Query) error {
	it := q.Consistency(db.cl).IterContext(ctx)
	n := it.NumRows()
	err := it.Close()

	if err != nil {
		return db.wrap(ctx, err)
	}
	if n == 0 {
		return driver.ErrNotFound
	}
	return nil
}

// args are a write's bind values: the values (as they are, bound as varchar), then or first
// the key.
func args(key string, values [][]byte, keyFirst bool) []any {
	a := make([]any, 0, len(values)+1)
	if keyFirst {
		a = append(a, key)
	}
	for _, v := range values {
		a = append(a, v)
	}
	if !keyFirst {
		a = append(a, key)
	}
	return a
}

func (db *DB) exec(ctx context.Context, stmt string, a []any) error {
	q := db.s.Query(stmt, a...).Consistency(db.cl)
	err := q.ExecContext(ctx)

	return db.wrap(ctx, err)
}

func (db *DB) Update(ctx context.Context, key string, fields []string, values [][]byte) error {
	st := db.st.Load()
	return db.exec(ctx, st.pick(fields, st.updateAll, st.updateOne, st.update), args(key, values, false))
}

func (db *DB) Insert(ctx context.Context, key string, fields []string, values [][]byte) error {
	st := db.st.Load()
	return db.exec(ctx, st.pick(fields, st.insertAll, nil, st.insert), args(key, values, true))
}

// batchFanOut bounds a batch insert's statements in flight.
const batchFanOut = 16

func (db *DB) BatchInsert(ctx context.Context, keys []string, fields []string, values [][][]byte) error {
	st := db.st.Load()
	stmt := st.pick(fields, st.insertAll, nil, st.insert)
	errs := make([]error, len(keys))
	sem := make(chan struct{}, batchFanOut)
	var wg sync.WaitGroup
	for i, k := range keys {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = db.exec(ctx, stmt, args(k, values[i], true))
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close closes the session; an operation in flight fails with an error that is net.ErrClosed.
// Idempotent.
func (db *DB) Close() error {
	db.once.Do(func() {
		db.closed.Store(true)
		db.s.Close()
	})
	return nil
}

// wrap turns a driver error into the contract's: the context's error when it ended,
// net.ErrClosed after Close.
func (db *DB) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if db.closed.Load() {
		return fmt.Errorf("cassandra: %w: %v", net.ErrClosed, err)
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("cassandra: %w (%v)", cerr, err)
	}
	return fmt.Errorf("cassandra: %w", err)
}
