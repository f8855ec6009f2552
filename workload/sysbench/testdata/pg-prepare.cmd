sysbench oltp_read_write --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=40521 --pgsql-user=boxbench --pgsql-db=postgres --tables=2 --table-size=10000 --threads=2 prepare
exit 0
