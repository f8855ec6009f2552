#!/bin/sh
# Captures the sysbench outputs the parser tests read. Usage:
#   capture.sh PGPORT MYPORT
# with a PostgreSQL (user boxbench, database postgres) and a MariaDB (user boxbench, database
# ycsb) listening on 127.0.0.1, e.g. the servers testkit/testdb starts. Files are written to
# the current directory: NAME.txt is sysbench's standard output (sysbench writes everything,
# errors included, to stdout), NAME.cmd the exact command.
set -u
pg="--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=$1 --pgsql-user=boxbench --pgsql-db=postgres"
my="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$2 --mysql-user=boxbench --mysql-db=ycsb"
common="--tables=2 --table-size=10000 --report-interval=1 --histogram=on --percentile=99 --forced-shutdown=15"

cap() { # name args...
	name=$1; shift
	echo "sysbench $*" > "$name.cmd"
	sysbench "$@" > "$name.txt" 2>&1
	echo "exit $?" >> "$name.cmd"
}

for d in pg my; do
	eval conn=\$$d
	sysbench oltp_read_write $conn --tables=2 cleanup >/dev/null
	cap "$d-prepare" oltp_read_write $conn --tables=2 --table-size=10000 --threads=2 prepare
	# closed loop, 2 s warm-up (checkpoint resets the histogram) + 4 s measured
	cap "$d-oltp_read_write" oltp_read_write $conn $common --threads=2 --time=6 --report-checkpoints=2 run
	cap "$d-oltp_write_only" oltp_write_only $conn $common --threads=2 --time=4 run
	cap "$d-oltp_point_select" oltp_point_select $conn $common --threads=2 --time=6 --report-checkpoints=2 run
	# open loop below capacity
	cap "$d-oltp_point_select-rate" oltp_point_select $conn $common --threads=2 --time=6 --report-checkpoints=2 --rate=500 run
	# open loop above capacity: the queue grows and latency with it
	cap "$d-oltp_read_write-overload" oltp_read_write $conn $common --threads=1 --time=4 --rate=2000 run
done
# failures
cap pg-refused oltp_point_select --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=1 --pgsql-user=boxbench --pgsql-db=postgres --time=1 run
cap my-notable oltp_point_select $my --tables=5 --time=1 run
# the event queue overflows (131072 events) when workers cannot keep up
cap pg-queuefull oltp_point_select $pg $common --threads=1 --time=4 --rate=400000 run
