// boxbench's launcher for Apache Cassandra: starts the node with its native (CQL) transport
// closed, sets the run's role from a credential file, then opens the transport. Nobody can
// connect over CQL before the run's password is in place, and the default cassandra/cassandra
// superuser is never created (it is removed if a data directory holds it).
//
// usage: java ... -Dcassandra.start_native_transport=false BoxbenchCassandra [CREDENTIAL-FILE]
//
// CREDENTIAL-FILE holds "ROLE PASSWORD" on one line; it is read, then deleted. Without it, the
// node runs without authentication (the yaml then names AllowAllAuthenticator).
//
// Compiled by scripts/cassandra.sh against the cached jars; runs on the same JRE as the server.
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.cassandra.cql3.QueryProcessor;
import org.apache.cassandra.db.ConsistencyLevel;
import org.apache.cassandra.exceptions.RequestExecutionException;
import org.apache.cassandra.service.CassandraDaemon;
import org.apache.cassandra.service.StorageService;
import org.mindrot.jbcrypt.BCrypt;

public final class BoxbenchCassandra {
    public static void main(String[] args) throws Exception {
        String role = null, password = null;
        if (args.length > 0) {
            Path cred = Path.of(args[0]);
            String[] f = new String(Files.readAllBytes(cred), StandardCharsets.UTF_8).trim().split(" ");
            Files.delete(cred);
            if (f.length != 2 || !f[0].matches("[a-z][a-z0-9_]{0,47}") || !f[1].matches("[0-9a-f]{16,128}")) {
                System.err.println("boxbench: the credential file is not 'ROLE HEXPASSWORD'");
                System.exit(2);
            }
            role = f[0];
            password = f[1];
        }
        if (Boolean.parseBoolean(System.getProperty("cassandra.start_native_transport", "true"))) {
            System.err.println("boxbench: start with -Dcassandra.start_native_transport=false");
            System.exit(2);
        }
        // A storage (internode) port of 0 asks for a free one on the listen address: a single
        // node's gossip port is nobody else's business, and a fixed neighbour of the CQL port
        // can be taken by another process on the host network. Seeds named without a port use
        // this one.
        if ("0".equals(System.getProperty("cassandra.storage_port"))) {
            String listen = System.getProperty("boxbench.listen_address", "127.0.0.1");
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(listen))) {
                System.setProperty("cassandra.storage_port", Integer.toString(s.getLocalPort()));
            }
        }
        CassandraDaemon.main(new String[0]); // returns once the node has joined (foreground mode)
        try {
            if (role != null) {
                // What CassandraRoleManager's own default-role setup does, with the run's role
                // and a bcrypt hash of the run's password; an existing role (a restored seed)
                // gets the new password.
                String hash = BCrypt.hashpw(password, BCrypt.gensalt(10));
                setRole(role, hash);
            }
            StorageService.instance.startNativeTransport();
            System.err.println("boxbench: native transport open" + (role != null ? " (role " + role + ")" : " (no authentication)"));
        } catch (Throwable t) {
            System.err.println("boxbench: setting up the node failed: " + t);
            t.printStackTrace();
            Runtime.getRuntime().halt(1);
        }
    }

    // SETUP_DEADLINE_MS bounds the role setup's retries.
    private static final long SETUP_DEADLINE_MS = 120_000;

    // setRole writes the role and removes the default one. In a ring the row's replica may be
    // another node, and a node that was just paused (a loaded host: a GC or a stolen cpu) times
    // out at ONE; the statements are idempotent, so a timeout or an unavailable replica is
    // retried until SETUP_DEADLINE_MS, as Cassandra's own role manager retries its setup.
    private static void setRole(String role, String hash) throws Exception {
        long deadline = System.currentTimeMillis() + SETUP_DEADLINE_MS;
        for (int attempt = 1; ; attempt++) {
            try {
                QueryProcessor.process("INSERT INTO system_auth.roles (role, is_superuser, can_login, salted_hash) VALUES ('"
                        + role + "', true, true, '" + hash + "')", ConsistencyLevel.ONE);
                QueryProcessor.process("DELETE FROM system_auth.roles WHERE role = 'cassandra'", ConsistencyLevel.ONE);
                if (!QueryProcessor.process("SELECT role FROM system_auth.roles WHERE role = 'cassandra'", ConsistencyLevel.ONE).isEmpty()) {
                    throw new IllegalStateException("the default role cassandra is still there");
                }
                return;
            } catch (RequestExecutionException e) {
                if (System.currentTimeMillis() >= deadline) {
                    throw e;
                }
                System.err.println("boxbench: the role setup, attempt " + attempt + ": " + e + "; retrying");
                Thread.sleep(1000);
            }
        }
    }
}
