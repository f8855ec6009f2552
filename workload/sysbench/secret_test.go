package sysbench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/mariadb"
	"github.com/boxbench/boxbench/dbms/postgresql"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/native"
	"github.com/boxbench/boxbench/testkit/testenv"
	"github.com/boxbench/boxbench/workload"
)

// TestPasswordNotInCmdline runs sysbench against real servers that require the run's password
// and reads /proc/<pid>/cmdline of the running sysbench (readable by every local user): the
// password is never in it, and the run succeeds (the client library got it from the
// environment).
func TestPasswordNotInCmdline(t *testing.T) {
	for _, d := range []dbms.DBMS{mariadb.MariaDB{}, postgresql.PostgreSQL{}} {
		name := d.Name()
		t.Run(name, func(t *testing.T) {
			testenv.NeedRoot(t)
			testenv.NeedCommands(t, "sysbench", "setpriv")
			testenv.NeedCommands(t, dbms.ServerBinary(d))
			pw := dbms.NewPassword()
			exp := fmt.Sprintf("test-secret-%d", os.Getpid())
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			box, err := native.New().Provision(ctx, platform.Request{Experiment: exp, Run: name,
				WorkDir: filepath.Join(testenv.WorkRoot(t), exp+"-"+name), DBMS: dbms.WithPassword(d, pw),
				Choice: platform.Choice{Storage: "bind", Network: "host"}})
			if err != nil {
				t.Fatalf("start %s: %v", name, err)
			}
			t.Cleanup(func() {
				if err := box.Teardown(context.Background()); err != nil {
					t.Errorf("teardown: %v", err)
				}
				_ = cgroup.At("/boxbench/" + exp).Remove()
			})
			cred := d.Client()
			tgt := workload.Target{DBMS: name, Endpoint: box.Endpoint(), User: cred.User, Database: cred.Database, Password: pw}
			c := pgConfig()
			c.DBMS, c.Tables, c.TableSize, c.Threads = d, 1, 500, 1
			c.Driver = map[string]string{"postgresql": DriverPgSQL, "mariadb": DriverMySQL}[name]
			c.Warmup, c.Duration = 0, 3*time.Second
			w, err := New(c)
			if err != nil {
				t.Fatal(err)
			}

			var (
				mu   sync.Mutex
				seen = map[string]bool{} // the command lines of sysbench processes seen
			)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					for _, cl := range sysbenchCmdlines(os.Getpid()) {
						mu.Lock()
						seen[cl] = true
						mu.Unlock()
					}
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
				}
			}()
			loadErr := w.Load(ctx, tgt)
			var runErr error
			if loadErr == nil {
				_, runErr = w.Run(ctx, tgt, workload.Clock{Start: time.Now()})
			}
			close(stop)
			wg.Wait()
			if loadErr != nil || runErr != nil {
				t.Fatalf("load: %v; run: %v", loadErr, runErr)
			}
			if len(seen) == 0 {
				t.Fatal("never saw a running sysbench: the test checked nothing")
			}
			var ran bool
			for cl := range seen {
				if strings.Contains(cl, pw) {
					t.Errorf("the password is in sysbench's command line: %q", strings.ReplaceAll(cl, pw, "<the password>"))
				}
				ran = ran || strings.HasSuffix(cl, " run")
			}
			if !ran {
				t.Errorf("never saw `sysbench … run`, only %d other command lines", len(seen))
			}
		})
	}
}

// sysbenchCmdlines returns the command lines (NULs as spaces) of the children of ppid that
// run sysbench, as any local user could read them.
func sysbenchCmdlines(ppid int) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(st)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || !strings.Contains(s[:i], "(sysbench") {
			continue
		}
		if f := strings.Fields(s[i+1:]); len(f) < 2 || f[1] != strconv.Itoa(ppid) {
			continue
		}
		cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || len(cl) == 0 {
			continue
		}
		out = append(out, string(bytes.TrimRight(bytes.ReplaceAll(cl, []byte{0}, []byte{' '}), " ")))
	}
	return out
}
