// CuratorLock drives one Apache Curator InterProcessMutex from commands on
// stdin, for zkherd's interoperability test (recipes/interop_test.go).
//
//   java CuratorLock <connect string> <lock path>
//
// It prints "READY <session id>" once connected, then answers each command:
//   acquire     -> ACQUIRED                 (blocks until held)
//   try <ms>    -> ACQUIRED | TIMEOUT
//   release     -> RELEASED
//   quit        -> BYE
// Errors are printed as "ERROR <message>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;

public class CuratorLock {
    public static void main(String[] args) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], 10000, 10000, new RetryOneTime(100));
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            System.out.println("ERROR not connected to " + args[0]);
            System.exit(1);
        }
        InterProcessMutex mutex = new InterProcessMutex(client, args[1]);
        System.out.println("READY " + client.getZookeeperClient().getZooKeeper().getSessionId());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            try {
                switch (f[0]) {
                    case "acquire":
                        mutex.acquire();
                        System.out.println("ACQUIRED");
                        break;
                    case "try":
                        boolean held = mutex.acquire(Long.parseLong(f[1]), TimeUnit.MILLISECONDS);
                        System.out.println(held ? "ACQUIRED" : "TIMEOUT");
                        break;
                    case "release":
                        mutex.release();
                        System.out.println("RELEASED");
                        break;
                    case "quit":
                        client.close();
                        System.out.println("BYE");
                        return;
                    default:
                        System.out.println("ERROR unknown command " + f[0]);
                }
            } catch (Exception e) {
                System.out.println("ERROR " + e);
            }
        }
        client.close();
    }
}
