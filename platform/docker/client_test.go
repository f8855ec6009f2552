package docker

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/cassandra"
	"github.com/boxbench/boxbench/dbms/etcd"
	"github.com/boxbench/boxbench/dbms/ferretdb"
	"github.com/boxbench/boxbench/dbms/mariadb"
	"github.com/boxbench/boxbench/driver"
)

// kv writes and reads small values through the real endpoint with each database's own client,
// so a test proves that a client on the host reaches the server the way the cell says.
type kv interface {
	put(ctx context.Context, k, v string) error
	get(ctx context.Context, k string) (string, error)
	close()
}

func dial(ctx context.Context, d dbms.DBMS, ep driver.Endpoint) (kv, error) {
	switch d.Name() {
	case "postgresql":
		c := d.Client()
		cfg, err := pgx.ParseConfig("")
		if err != nil {
			return nil, err
		}
		cfg.Host, cfg.Port, cfg.User, cfg.Database = ep.Host, uint16(ep.Port), c.User, c.Database
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return nil, err
		}
		if _, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS boxbench_kv (k text PRIMARY KEY, v text)"); err != nil {
			conn.Close(ctx)
			return nil, err
		}
		return pgKV{conn}, nil
	case "mariadb":
		db, err := sql.Open("mysql", mariadb.MariaDB{}.DSN(ep, mariadb.MariaDB{}.Client()))
		if err != nil {
			return nil, err
		}
		if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS boxbench_kv (k VARCHAR(64) PRIMARY KEY, v TEXT)"); err != nil {
			db.Close()
			return nil, err
		}
		return sqlKV{db}, nil
	case "redis":
		c := redis.NewClient(&redis.Options{Addr: ep.String()})
		return redisKV{c}, c.Ping(ctx).Err()
	case "ferretdb":
		c, err := mongo.Connect(ferretdb.MongoOptions(ep, d.Client()))
		if err != nil {
			return nil, err
		}
		return mongoKV{c.Database(d.Client().Database).Collection("boxbench_kv")}, nil
	case "etcd":
		c, err := clientv3.New(etcd.EtcdConfig(ep, d.Client()))
		if err != nil {
			return nil, err
		}
		return etcdKV{c}, nil
	case "cassandra":
		s, err := cassandra.CQLSession(ctx, ep, d.Client())
		if err != nil {
			return nil, err
		}
		for _, q := range []string{
			"CREATE KEYSPACE IF NOT EXISTS boxbench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
			"CREATE TABLE IF NOT EXISTS boxbench.kv (k text PRIMARY KEY, v text)"} {
			if err := s.Query(q).ExecContext(ctx); err != nil {
				s.Close()
				return nil, err
			}
		}
		return cqlKV{s}, nil
	}
	return nil, fmt.Errorf("no test client for %s", d.Name())
}

type pgKV struct{ c *pgx.Conn }

func (p pgKV) put(ctx context.Context, k, v string) error {
	_, err := p.c.Exec(ctx, "INSERT INTO boxbench_kv VALUES ($1, $2)", k, v)
	return err
}
func (p pgKV) get(ctx context.Context, k string) (v string, err error) {
	err = p.c.QueryRow(ctx, "SELECT v FROM boxbench_kv WHERE k = $1", k).Scan(&v)
	return v, err
}
func (p pgKV) close() { p.c.Close(context.Background()) }

type sqlKV struct{ db *sql.DB }

func (s sqlKV) put(ctx context.Context, k, v string) error {
	_, err := s.db.ExecContext(ctx, "INSERT INTO boxbench_kv VALUES (?, ?)", k, v)
	return err
}
func (s sqlKV) get(ctx context.Context, k string) (v string, err error) {
	err = s.db.QueryRowContext(ctx, "SELECT v FROM boxbench_kv WHERE k = ?", k).Scan(&v)
	return v, err
}
func (s sqlKV) close() { s.db.Close() }

type redisKV struct{ c *redis.Client }

func (r redisKV) put(ctx context.Context, k, v string) error { return r.c.Set(ctx, k, v, 0).Err() }
func (r redisKV) get(ctx context.Context, k string) (string, error) {
	v, err := r.c.Get(ctx, k).Result()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("key %s not found", k)
	}
	return v, err
}
func (r redisKV) close() { r.c.Close() }

type cqlKV struct{ s *gocql.Session }

func (c cqlKV) put(ctx context.Context, k, v string) error {
	return c.s.Query("INSERT INTO boxbench.kv (k, v) VALUES (?, ?)", k, v).ExecContext(ctx)
}
func (c cqlKV) get(ctx context.Context, k string) (v string, err error) {
	err = c.s.Query("SELECT v FROM boxbench.kv WHERE k = ?", k).ScanContext(ctx, &v)
	return v, err
}
func (c cqlKV) close() { c.s.Close() }

type etcdKV struct{ c *clientv3.Client }

func (e etcdKV) put(ctx context.Context, k, v string) error {
	_, err := e.c.Put(ctx, k, v)
	return err
}
func (e etcdKV) get(ctx context.Context, k string) (string, error) {
	r, err := e.c.Get(ctx, k)
	if err != nil {
		return "", err
	}
	if len(r.Kvs) == 0 {
		return "", fmt.Errorf("key %s not found", k)
	}
	return string(r.Kvs[0].Value), nil
}
func (e etcdKV) close() { e.c.Close() }

type mongoKV struct{ c *mongo.Collection }

func (m mongoKV) put(ctx context.Context, k, v string) error {
	_, err := m.c.InsertOne(ctx, bson.D{{Key: "_id", Value: k}, {Key: "v", Value: v}})
	return err
}
func (m mongoKV) get(ctx context.Context, k string) (string, error) {
	var doc struct {
		V string `bson:"v"`
	}
	err := m.c.FindOne(ctx, bson.D{{Key: "_id", Value: k}}).Decode(&doc)
	return doc.V, err
}
func (m mongoKV) close() { _ = m.c.Database().Client().Disconnect(context.Background()) }
