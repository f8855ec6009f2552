sysbench oltp_point_select --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=34979 --mysql-user=boxbench --mysql-db=ycsb --tables=2 --table-size=10000 --report-interval=1 --histogram=on --percentile=99 --forced-shutdown=15 --threads=2 --time=6 --report-checkpoints=2 --rate=500 run
exit 0
