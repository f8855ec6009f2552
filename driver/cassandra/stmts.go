package cassandra

import (
	"regexp"
	"strings"

	"github.com/boxbench/boxbench/driver"
)

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
