sysbench oltp_write_only --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=40521 --pgsql-user=boxbench --pgsql-db=postgres --tables=2 --table-size=10000 --report-interval=1 --histogram=on --percentile=99 --forced-shutdown=15 --threads=2 --time=4 run
exit 0
