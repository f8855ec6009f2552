package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/boxbench/boxbench/dbms"
)

// Redis's own counters (Observer): INFO over the client protocol, at the endpoint boxbench's
// client uses, with the run's password. A box whose client runs elsewhere (an overlay network)
// may not be reachable from the host: the reading then fails and the run says so.

// redisCounters: INFO's counters and the run metrics their differences become.
var redisCounters = map[string]string{
	"evicted_keys": "server_evicted_keys_total",
	"expired_keys": "server_expired_keys_total",
	// Every fork: a background RDB save or AOF rewrite (boxbench's Redis has no RDB saves, but
	// the append-only file is rewritten when it has doubled).
	"total_forks": "server_forks_total",
}

// parseRedisInfo parses INFO's "field:value" lines; only numeric values are kept.
func parseRedisInfo(text string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[k] = f
		}
	}
	return out
}

// redisWindow is what two INFO readings say about the window between them.
func redisWindow(start, end map[string]float64) dbms.ServerWindow {
	w := dbms.ServerWindow{Metrics: map[string]float64{}}
	if start["process_id"] != end["process_id"] || start["uptime_in_seconds"] > end["uptime_in_seconds"] {
		w.Missing = append(w.Missing, "server_*: Redis restarted during the window")
		return w
	}
	dbms.CounterWindow(start, end, redisCounters, &w)
	// A fork under way at either end: a save or rewrite that started before the window or was
	// still running after it.
	active, known := 0.0, false
	for _, r := range []map[string]float64{start, end} {
		for _, k := range []string{"rdb_bgsave_in_progress", "aof_rewrite_in_progress"} {
			if v, ok := r[k]; ok {
				active, known = max(active, v), true
			}
		}
	}
	if known {
		w.Metrics["server_background_save_active_max"] = active
	} else {
		w.Missing = append(w.Missing, "server_background_save_active_max: INFO persistence did not say")
	}
	if v, ok := end["used_memory"]; ok {
		w.Metrics["server_memory_used_bytes"] = v
	}
	if a, b := start["server_time_usec"], end["server_time_usec"]; a > 0 && b > a {
		w.Span = time.Duration(b-a) * time.Microsecond
	}
	return w
}

func redisInfo(ctx context.Context, a dbms.ServerAccess) (map[string]float64, error) {
	o := &goredis.Options{Addr: a.Endpoint.String(), MaxRetries: -1, Password: a.Credentials.Password}
	if a.Endpoint.Unix != "" {
		o.Network, o.Addr = "unix", a.Endpoint.Unix
	}
	c := goredis.NewClient(o)
	defer c.Close()
	s, err := c.Info(ctx, "server", "stats", "persistence", "memory").Result()
	if err != nil {
		return nil, fmt.Errorf("redis INFO: %w", err)
	}
	return parseRedisInfo(s), nil
}

// Watch reads INFO at the start of the window; End reads it again (see redisWindow).
func (Redis) Watch(ctx context.Context, a dbms.ServerAccess) (dbms.ServerWatch, error) {
	return dbms.WatchCounters(ctx, a, redisInfo, redisWindow)
}
