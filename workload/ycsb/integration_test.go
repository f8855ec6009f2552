package ycsb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	gocql "github.com/apache/cassandra-gocql-driver/v2"
	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/boxbench/boxbench/dbms"
	cassandradb "github.com/boxbench/boxbench/dbms/cassandra"
	etcddb "github.com/boxbench/boxbench/dbms/etcd"
	"github.com/boxbench/boxbench/dbms/ferretdb"
	"github.com/boxbench/boxbench/dbms/mariadb"
	"github.com/boxbench/boxbench/dbms/postgresql"
	redisdb "github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/driver/cassandra"
	"github.com/boxbench/boxbench/driver/etcd"
	"github.com/boxbench/boxbench/driver/mongodb"
	"github.com/boxbench/boxbench/driver/mysql"
	"github.com/boxbench/boxbench/driver/postgres"
	"github.com/boxbench/boxbench/driver/redis"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/testdb"
	"github.com/boxbench/boxbench/workload"
)

// testDrivers is the wiring the product does in one place; the tests repeat it.
var testDrivers = map[string]Opener{"redis": redis.New, "postgresql": postgres.New, "mariadb": mysql.New,
	"etcd": etcd.New, "ferretdb": mongodb.New, "cassandra": cassandra.New}

func target(b platform.Box, d dbms.DBMS) workload.Target {
	c := d.Client()
	return workload.Target{DBMS: d.Name(), Endpoint: b.Endpoint(), User: c.User, Database: c.Database}
}

// TestAgainstRealDatabases loads, checks a loaded key, runs a mix with every operation and
// checks the counts, the measured mix and the errors; then runs reads of keys half of which
// were never loaded and checks they are counted as not_found.
func TestAgainstRealDatabases(t *testing.T) {
	for _, db := range []dbms.DBMS{redisdb.Redis{}, postgresql.PostgreSQL{}, mariadb.MariaDB{}, etcddb.Etcd{}, ferretdb.FerretDB{}, cassandradb.Cassandra{}} {
		name := db.Name()
		t.Run(name, func(t *testing.T) {
			box, d := testdb.Start(t, db)
			tg := target(box, d)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()

			cfg := DefaultConfig()
			cfg.RecordCount, cfg.Threads, cfg.LoadBatch, cfg.Seed = 2000, 4, 64, 7
			cfg.Mix = ""
			cfg.Proportions = map[string]float64{"read": 0.4, "update": 0.2, "insert": 0.15, "scan": 0.1, "rmw": 0.15}
			cfg.ReadAllFields, cfg.ScanLength = false, 20
			cfg.Warmup, cfg.Duration, cfg.OperationCount = 0, 0, 4000
			if name == "ferretdb" {
				// FerretDB 1.x pushes neither a scan's _id ≥ key nor its sort down to
				// PostgreSQL: every scan reads and sorts the whole collection in FerretDB.
				cfg.RecordCount, cfg.OperationCount = 500, 1500
			}
			w, err := New(cfg, testDrivers)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Load(ctx, tg); err != nil {
				t.Fatal(err)
			}
			if n := countRecords(t, ctx, name, tg); n != cfg.RecordCount {
				t.Fatalf("loaded %d records, want %d", n, cfg.RecordCount)
			}
			checkReads(t, ctx, tg, cfg)

			res, err := w.Run(ctx, tg, workload.Clock{Start: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Mode != workload.ModeClosed || len(res.Intervals) == 0 {
				t.Errorf("mode %s, %d intervals", res.Mode, len(res.Intervals))
			}
			if len(res.Errors) != 0 {
				t.Errorf("errors: %v", res.Errors)
			}
			counts := opCounts(res)
			var total int64
			for _, n := range counts {
				total += n
			}
			if total != cfg.OperationCount {
				t.Errorf("ran %d operations, want %d (%v)", total, cfg.OperationCount, counts)
			}
			props := w.cfg.props
			if pv := chiSquare(t, counts[:], props[:]); pv < alpha {
				t.Errorf("measured mix %v does not match %v: chi-square p = %g", counts, props, pv)
			}
			if n := countRecords(t, ctx, name, tg); n != cfg.RecordCount+counts[opInsert] {
				t.Errorf("%d records after %d inserts on %d, want %d", n, counts[opInsert], cfg.RecordCount,
					cfg.RecordCount+counts[opInsert])
			}
			for _, s := range res.Ops {
				if s.Count > 0 && (s.P50 <= 0 || s.Max < s.P99 || len(s.Hist) == 0) {
					t.Errorf("%s/%s summary: %+v", s.Op, s.Series, s)
				}
			}

			// Errors by kind: uniform reads over twice the loaded key space.
			cfg.Proportions = map[string]float64{"read": 1}
			cfg.RequestDistribution, cfg.RecordCount, cfg.OperationCount = "uniform", 2*cfg.RecordCount, 2000
			w2, err := New(cfg, testDrivers)
			if err != nil {
				t.Fatal(err)
			}
			res, err = w2.Run(ctx, tg, workload.Clock{Start: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			miss := res.Errors["not_found"]
			loaded := float64(cfg.RecordCount/2+counts[opInsert]) / float64(cfg.RecordCount)
			// Binomial: 2000 draws, expected miss share 1-loaded; allow 5 standard deviations.
			want := (1 - loaded) * 2000
			if sd := math.Sqrt(2000 * loaded * (1 - loaded)); math.Abs(float64(miss)-want) > 5*sd {
				t.Errorf("not_found %d, want about %.0f (errors %v)", miss, want, res.Errors)
			}
			if len(res.Errors) != 1 {
				t.Errorf("errors of other kinds: %v", res.Errors)
			}
			for _, s := range res.Ops {
				if s.Op == "read" && s.Errors != miss {
					t.Errorf("read summary counts %d errors, errors map %d", s.Errors, miss)
				}
			}
		})
	}
}

// opCounts sums successes and errors per operation from the latency summaries.
func opCounts(res *workload.Result) [numOps]int64 {
	var c [numOps]int64
	for _, s := range res.Ops {
		if s.Series == "latency" {
			c[opIndex(s.Op)] += s.Count + s.Errors
		}
	}
	return c
}

// checkReads reads loaded key number 0 through the driver, all fields and one, and a key that
// was never loaded.
func checkReads(t *testing.T, ctx context.Context, tg workload.Target, cfg Config) {
	t.Helper()
	db, err := testDrivers[tg.DBMS](ctx, tg.Endpoint, driver.Credentials{User: tg.User, Database: tg.Database}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	key := string(appendKey(nil, 0, true, 1))
	if err := db.Read(ctx, key, nil); err != nil {
		t.Errorf("read all fields of loaded %s: %v", key, err)
	}
	if err := db.Read(ctx, key, []string{"FIELD3"}); err != nil {
		t.Errorf("read FIELD3 of loaded %s: %v", key, err)
	}
	if err := db.Read(ctx, "user-none", nil); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("read of a missing key: %v, want ErrNotFound", err)
	}
	if err := db.Scan(ctx, key, 5, nil); err != nil {
		t.Errorf("scan from %s: %v", key, err)
	}
}

// countRecords counts the rows (Redis: indexed hashes) with each database's own client.
func countRecords(t *testing.T, ctx context.Context, name string, tg workload.Target) int64 {
	t.Helper()
	var n int64
	var err error
	switch name {
	case "redis":
		c := goredis.NewClient(&goredis.Options{Addr: tg.Endpoint.String()})
		defer c.Close()
		var hashes int64
		if n, err = c.ZCard(ctx, redis.IndexKey).Result(); err == nil {
			hashes, err = c.DBSize(ctx).Result()
			if err == nil && hashes != n+1 {
				err = fmt.Errorf("%d keys besides the index, %d indexed", hashes-1, n)
			}
		}
	case "postgresql":
		var c *pgx.Conn
		c, err = pgx.Connect(ctx, fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable",
			tg.Endpoint.Host, tg.Endpoint.Port, tg.User, tg.Database))
		if err == nil {
			defer c.Close(ctx)
			err = c.QueryRow(ctx, "SELECT count(*) FROM usertable").Scan(&n)
		}
	case "mariadb":
		cfg := gomysql.NewConfig()
		cfg.User, cfg.DBName, cfg.Net, cfg.Addr = tg.User, tg.Database, "tcp", tg.Endpoint.String()
		var db *sql.DB
		db, err = sql.Open("mysql", cfg.FormatDSN())
		if err == nil {
			defer db.Close()
			err = db.QueryRowContext(ctx, "SELECT count(*) FROM usertable").Scan(&n)
		}
	case "ferretdb":
		var c *mongo.Client
		if c, err = mongo.Connect(ferretdb.MongoOptions(tg.Endpoint, driver.Credentials{})); err == nil {
			defer c.Disconnect(ctx)
			n, err = c.Database(tg.Database).Collection("usertable").CountDocuments(ctx, bson.D{})
		}
	case "cassandra":
		var s *gocql.Session
		if s, err = cassandradb.CQLSession(ctx, tg.Endpoint, driver.Credentials{}); err == nil {
			defer s.Close()
			err = s.Query("SELECT count(*) FROM "+tg.Database+".usertable").ScanContext(ctx, &n)
		}
	case "etcd": // one key per field: every record has all its fields
		var c *clientv3.Client
		c, err = clientv3.New(etcddb.EtcdConfig(tg.Endpoint, driver.Credentials{}))
		if err == nil {
			defer c.Close()
			var r *clientv3.GetResponse
			if r, err = c.Get(ctx, "usertable/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err == nil {
				fc := int64(DefaultConfig().FieldCount)
				if n = r.Count / fc; r.Count%fc != 0 {
					err = fmt.Errorf("%d keys is not a whole number of %d-field records", r.Count, fc)
				}
			}
		}
	}
	if err != nil {
		t.Fatalf("count records in %s: %v", name, err)
	}
	return n
}

// TestOpenLoopShowsStall is the coordinated-omission case: an open loop at 2000 ops/s against
// Redis, whose server is stopped (SIGSTOP) for one second. Operations due during the stall
// wait for it, so their latency — counted from the intended start — spans up to the stall,
// for about rate × stall operations; their service time does not (only the few operations in
// flight when the server stopped took long to serve). A closed loop, or timing from the actual
// start, would report a handful of slow operations instead of a second's worth.
func TestOpenLoopShowsStall(t *testing.T) {
	box, d := testdb.Start(t, redisdb.Redis{})
	tg := target(box, d)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.Mix, cfg.RecordCount, cfg.Threads = "c", 1000, 4
	cfg.Warmup, cfg.Duration, cfg.TargetRate = 0, 4*time.Second, 2000
	w, err := New(cfg, testDrivers)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Load(ctx, tg); err != nil {
		t.Fatal(err)
	}
	pause, resume := testdb.Pauser(t, box)
	const stall = time.Second
	go func() {
		time.Sleep(1500 * time.Millisecond)
		pause()
		time.Sleep(stall)
		resume()
	}()
	res, err := w.Run(ctx, tg, workload.Clock{Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != workload.ModeOpen || res.TargetOps != 2000 {
		t.Errorf("mode %s target %v", res.Mode, res.TargetOps)
	}
	slow := map[string]int64{}
	for _, s := range res.Ops {
		h, err := hdrhistogram.Decode(s.Hist)
		if err != nil {
			t.Fatal(err)
		}
		slow[s.Series] = countAbove(h, int64(stall/2))
		t.Logf("%s: n=%d p50=%v p99=%v max=%v, over %v: %d", s.Series, s.Count,
			time.Duration(s.P50), time.Duration(s.P99), time.Duration(s.Max), stall/2, slow[s.Series])
		if s.Series == "latency" && s.Max < int64(stall*8/10) {
			t.Errorf("latency max %v does not show the %v stall", time.Duration(s.Max), stall)
		}
	}
	// About 2000/s × 0.5 s of operations were due in the first half of the stall.
	if slow["latency"] < 500 {
		t.Errorf("%d operations with latency over %v, want hundreds", slow["latency"], stall/2)
	}
	if slow["service"] > int64(2*cfg.Threads) {
		t.Errorf("%d operations with service time over %v, want at most the ones in flight", slow["service"], stall/2)
	}
}

// countAbove counts the recorded values at or above v.
func countAbove(h *hdrhistogram.Histogram, v int64) int64 {
	var n int64
	for _, b := range h.Distribution() {
		if b.From >= v {
			n += b.Count
		}
	}
	return n
}
