sysbench oltp_point_select --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=34979 --mysql-user=boxbench --mysql-db=ycsb --tables=5 --time=1 run
exit 1
