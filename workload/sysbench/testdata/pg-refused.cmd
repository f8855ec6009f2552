sysbench oltp_point_select --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=1 --pgsql-user=boxbench --pgsql-db=postgres --time=1 run
exit 1
