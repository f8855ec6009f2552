// boxbench's observer for Apache Cassandra: a Java agent in the node's JVM that writes the JVM's
// and the node's own counters to a file when asked, so that a run can store what the server
// itself did during the measured window (dbms.Observer; dbms/cassandraobs.go reads the file).
//
// usage: java -javaagent:/path/boxbench-observer.jar=STATS-FILE ... (the start script's JVM line)
//
// Protocol: whoever wants a reading creates STATS-FILE.want; within about 50 ms the observer
// writes STATS-FILE (a temporary file renamed over it, so a reader never sees half of it) and
// deletes STATS-FILE.want. STATS-FILE holds "name value" lines, counters since the JVM started
// and levels at the time of the reading, "pause END-MS DURATION-MS" lines for the last 1024
// garbage-collection pauses (END-MS on the same clock as time_ms), and "missing name why"
// for a value it could not read (Cassandra's metrics exist only once the node has started).
// STATS-FILE is deleted when the JVM exits, so a captured data directory does not carry it.
//
// It reads only platform MXBeans and Cassandra's metrics through the platform MBean server
// (Cassandra registers them there whether or not remote JMX is started; no port is opened), so
// it is compiled without Cassandra's jars and touches none of its classes. Between readings it
// only looks for STATS-FILE.want every 50 ms and records each pause from the JVM's GC
// notifications: nothing that costs the node measurable CPU.
//
// Compiled by scripts/cassandra.sh into its own jar; runs on the same JRE as the server.
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Collection;
import java.util.Set;

import javax.management.MBeanServer;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;

import com.sun.management.GarbageCollectionNotificationInfo;

public final class BoxbenchObserver {
    private static final int KEEP = 1024;
    private static final long[] pauseEnd = new long[KEEP];
    private static final long[] pauseMillis = new long[KEEP];
    private static long pauses; // guarded by the class
    private static long jvmStart;

    public static void premain(String arg) {
        if (arg == null || arg.isEmpty()) {
            System.err.println("boxbench observer: no stats file given (-javaagent:JAR=FILE); not observing");
            return;
        }
        Path out = Path.of(arg);
        Path want = Path.of(arg + ".want");
        jvmStart = ManagementFactory.getRuntimeMXBean().getStartTime();
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof NotificationEmitter) {
                ((NotificationEmitter) gc).addNotificationListener(BoxbenchObserver::onGC, null, null);
            }
        }
        Thread t = new Thread(() -> serve(out, want), "boxbench-observer");
        t.setDaemon(true);
        t.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                Files.deleteIfExists(out);
                Files.deleteIfExists(want);
            } catch (IOException e) {
                // the process is ending; a leftover file is harmless (the next node overwrites it)
            }
        }, "boxbench-observer-exit"));
    }

    private static void onGC(Notification n, Object handback) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
            return;
        }
        GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
        synchronized (BoxbenchObserver.class) {
            int i = (int) (pauses % KEEP);
            pauseEnd[i] = jvmStart + info.getGcInfo().getEndTime();
            pauseMillis[i] = info.getGcInfo().getDuration();
            pauses++;
        }
    }

    private static void serve(Path out, Path want) {
        Path tmp = Path.of(out + ".tmp");
        while (true) {
            try {
                Thread.sleep(50);
                if (!Files.exists(want)) {
                    continue;
                }
                Files.write(tmp, reading().getBytes(StandardCharsets.UTF_8));
                Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                Files.deleteIfExists(want);
            } catch (InterruptedException e) {
                return;
            } catch (Throwable e) {
                System.err.println("boxbench observer: " + e);
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
    }

    private static String reading() {
        StringBuilder b = new StringBuilder(8192);
        b.append("boxbench_observer 1\n");
        b.append("time_ms ").append(System.currentTimeMillis()).append('\n');
        b.append("jvm_start_ms ").append(jvmStart).append('\n');
        long count = 0, millis = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, gc.getCollectionCount());
            millis += Math.max(0, gc.getCollectionTime());
        }
        b.append("gc_pauses_total ").append(count).append('\n');
        b.append("gc_pause_ms_total ").append(millis).append('\n');
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        b.append("heap_used_bytes ").append(heap.getUsed()).append('\n');
        b.append("heap_max_bytes ").append(heap.getMax()).append('\n');

        MBeanServer s = ManagementFactory.getPlatformMBeanServer();
        String m = "org.apache.cassandra.metrics:";
        metric(b, s, "compactions_pending", m + "type=Compaction,name=PendingTasks", "Value");
        metric(b, s, "compactions_completed_total", m + "type=Compaction,name=CompletedTasks", "Value");
        metric(b, s, "compacted_bytes_total", m + "type=Compaction,name=BytesCompacted", "Count");
        active(b, s);
        metric(b, s, "memtable_flushes_total", m + "type=ThreadPools,path=internal,scope=MemtableFlushWriter,name=CompletedTasks", "Value");
        metric(b, s, "dropped_messages_total", m + "type=DroppedMessage,scope=*,name=Dropped", "Count");
        metric(b, s, "threadpool_blocked_total", m + "type=ThreadPools,path=*,scope=*,name=TotalBlockedTasks", "Count");
        metric(b, s, "threadpool_pending", m + "type=ThreadPools,path=*,scope=*,name=PendingTasks", "Value");

        synchronized (BoxbenchObserver.class) {
            for (long k = Math.max(0, pauses - KEEP); k < pauses; k++) {
                int i = (int) (k % KEEP);
                b.append("pause ").append(pauseEnd[i]).append(' ').append(pauseMillis[i]).append('\n');
            }
        }
        return b.toString();
    }

    // metric sums one numeric attribute over the MBeans that pattern names.
    private static void metric(StringBuilder b, MBeanServer s, String name, String pattern, String attr) {
        try {
            Set<ObjectName> names = s.queryNames(new ObjectName(pattern), null);
            if (names.isEmpty()) {
                b.append("missing ").append(name).append(" no MBean ").append(pattern).append('\n');
                return;
            }
            long sum = 0;
            for (ObjectName n : names) {
                sum += ((Number) s.getAttribute(n, attr)).longValue();
            }
            b.append(name).append(' ').append(sum).append('\n');
        } catch (Exception e) {
            b.append("missing ").append(name).append(' ').append(e.toString().replace('\n', ' ')).append('\n');
        }
    }

    // active counts the compactions (and other sstable tasks: cleanup, scrub, index builds)
    // running now: CompactionManager's list of them.
    private static void active(StringBuilder b, MBeanServer s) {
        String pattern = "org.apache.cassandra.db:type=CompactionManager";
        try {
            Object v = s.getAttribute(new ObjectName(pattern), "Compactions");
            if (v instanceof Collection) {
                b.append("compactions_active ").append(((Collection<?>) v).size()).append('\n');
            } else {
                b.append("missing compactions_active ").append(pattern).append(" Compactions is not a list\n");
            }
        } catch (Exception e) {
            b.append("missing compactions_active ").append(e.toString().replace('\n', ' ')).append('\n');
        }
    }
}
