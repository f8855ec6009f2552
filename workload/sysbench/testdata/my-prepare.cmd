sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=34979 --mysql-user=boxbench --mysql-db=ycsb --tables=2 --table-size=10000 --threads=2 prepare
exit 0
