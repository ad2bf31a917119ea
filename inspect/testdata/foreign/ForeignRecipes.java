// Drives Curator and ZooKeeper-recipe recipes for the inspector's tests:
// java ForeignRecipes CONNECT RECIPE=PATH... Each recipe runs with a
// client (a session) of its own in a thread (it may block, as a waiter
// does); "OK" is printed once all have been started, and the process exits
// when stdin closes.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.CountDownLatch;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.ZooKeeper;

public class ForeignRecipes {
    static final CountDownLatch forever = new CountDownLatch(1);

    public static void main(String[] args) throws Exception {
        for (int i = 1; i < args.length; i++) {
            String[] rp = args[i].split("=", 2);
            Thread t = new Thread(start(args[0], rp[0], rp[1]));
            t.setDaemon(true);
            t.start();
            Thread.sleep(300); // in the order given: the first holds
        }
        System.out.println("OK");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        while (in.readLine() != null) {}
        System.exit(0);
    }

    static Runnable start(String connect, String recipe, String path) throws Exception {
        Runnable run;
        if (recipe.startsWith("zk-")) {
            CountDownLatch connected = new CountDownLatch(1);
            ZooKeeper zk = new ZooKeeper(connect, 30000, e -> {
                if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) connected.countDown();
            });
            connected.await();
            run = () -> {
                try {
                    if (recipe.equals("zk-writelock")) {
                        new org.apache.zookeeper.recipes.lock.WriteLock(zk, path, null).lock();
                    } else if (recipe.equals("zk-queue")) {
                        org.apache.zookeeper.recipes.queue.DistributedQueue q =
                            new org.apache.zookeeper.recipes.queue.DistributedQueue(zk, path, null);
                        q.offer("one".getBytes());
                        q.offer("two".getBytes());
                    }
                } catch (Exception e) {
                    e.printStackTrace();
                }
            };
        } else {
            CuratorFramework c = CuratorFrameworkFactory.newClient(connect, 30000, 15000, new RetryOneTime(500));
            c.start();
            c.blockUntilConnected();
            run = () -> {
                try {
                    switch (recipe) {
                    case "mutex": new InterProcessMutex(c, path).acquire(); break;
                    case "read": new InterProcessReadWriteLock(c, path).readLock().acquire(); break;
                    case "write": new InterProcessReadWriteLock(c, path).writeLock().acquire(); break;
                    case "semaphore": new InterProcessSemaphoreV2(c, path, 1).acquire(); break;
                    case "latch": new LeaderLatch(c, path).start(); break;
                    case "selector": {
                        LeaderSelector s = new LeaderSelector(c, path, new LeaderSelectorListenerAdapter() {
                            public void takeLeadership(CuratorFramework cf) throws Exception { forever.await(); }
                        });
                        s.start();
                        break;
                    }
                    case "queue": {
                        QueueSerializer<String> ser = new QueueSerializer<String>() {
                            public byte[] serialize(String s) { return s.getBytes(); }
                            public String deserialize(byte[] b) { return new String(b); }
                        };
                        QueueConsumer<String> none = new QueueConsumer<String>() {
                            public void consumeMessage(String m) {}
                            public void stateChanged(CuratorFramework cf, ConnectionState s) {}
                        };
                        DistributedQueue<String> q = QueueBuilder.builder(c, null, ser, path).buildQueue();
                        q.start();
                        q.put("one");
                        q.put("two");
                        break;
                    }
                    case "barrier": new DistributedBarrier(c, path).setBarrier(); break;
                    case "barrier-wait": new DistributedBarrier(c, path).waitOnBarrier(); break;
                    default: System.err.println("unknown recipe " + recipe); System.exit(2);
                    }
                } catch (Exception e) {
                    e.printStackTrace();
                }
            };
        }
        return run;
    }
}
