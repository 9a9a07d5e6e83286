import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import roost.push.Messages.*;

/**
 * Logs in to Roost's LeanCloud push connection as the unified Android SDK does (router, subprotocol
 * lc.protobuf2.3, login with loginMessage.systemInfo), parses what Roost sends with Java classes that
 * protoc generated from Roost's messages.proto, acknowledges a push and checks that it was counted.
 * Arguments: baseUrl appId masterKey installationId.
 */
public class PushCheck {
  // HTTP/1.1 as the SDK's OkHttp speaks it (Java's default offers h2c on http://, which Roost answers only without a body).
  static final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  static String get(String url, String appId, String masterKey) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url));
    if (masterKey != null) b.header("X-LC-Id", appId).header("X-LC-Key", masterKey + ",master");
    HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) throw new AssertionError(url + " answered " + r.statusCode() + ": " + r.body());
    return r.body();
  }

  static String field(String json, String name) {
    Matcher m = Pattern.compile("\"" + name + "\":\"?([^\",}]*)").matcher(json);
    if (!m.find()) throw new AssertionError("no " + name + " in " + json);
    return m.group(1);
  }

  static void check(boolean ok, String what) {
    if (!ok) throw new AssertionError(what);
  }

  public static void main(String[] args) throws Exception {
    String base = args[0], appId = args[1], masterKey = args[2], installationId = args[3];
    String route = get(base + "/v1/route?appId=" + appId + "&installationId=" + installationId + "&secure=1", null, null);
    String server = field(route, "server");
    check(field(route, "secondary").equals(server), "secondary equals server");
    Integer.parseInt(field(route, "ttl"));

    LinkedBlockingQueue<GenericCommand> received = new LinkedBlockingQueue<>();
    WebSocket.Listener listener = new WebSocket.Listener() {
      final ByteArrayOutputStream frame = new ByteArrayOutputStream();
      public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        frame.writeBytes(bytes);
        if (last) {
          try {
            received.add(GenericCommand.parseFrom(frame.toByteArray()));
          } catch (Exception e) {
            throw new RuntimeException("Roost sent a frame the generated parser refuses", e);
          }
          frame.reset();
        }
        ws.request(1);
        return null;
      }
    };
    WebSocket ws = http.newWebSocketBuilder().subprotocols("lc.protobuf2.3").buildAsync(URI.create(server), listener).get(10, TimeUnit.SECONDS);
    check("lc.protobuf2.3".equals(ws.getSubprotocol()), "subprotocol lc.protobuf2.3, got " + ws.getSubprotocol());

    SystemInfo info = SystemInfo.newBuilder()
        .setDeviceType(DeviceType.android)
        .setIsEmulator(true)
        .setAndroidVersion(AndroidVersion.newBuilder().setApiLevel("33").setCodename("REL"))
        .setOsVersion(SemanticVersion.newBuilder().setBuild("Google/google/Pixel 7"))
        .build();
    GenericCommand login = GenericCommand.newBuilder().setCmd(CommandType.login).setAppId(appId).setInstallationId(installationId)
        .setLoginMessage(LoginCommand.newBuilder().setSystemInfo(info)).build();
    ws.sendBinary(ByteBuffer.wrap(login.toByteArray()), true).get();

    GenericCommand loggedin = received.poll(10, TimeUnit.SECONDS);
    check(loggedin != null && loggedin.getCmd() == CommandType.loggedin, "loggedin, got " + loggedin);
    check(loggedin.hasService() && loggedin.getService() == 0, "loggedin with service 0");
    check(!loggedin.getLoggedinMessage().getPushDisabled(), "pushDisabled false");

    HttpRequest push = HttpRequest.newBuilder(URI.create(base + "/1.1/push"))
        .header("X-LC-Id", appId).header("X-LC-Key", masterKey + ",master").header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"where\":{\"installationId\":\"" + installationId + "\"},\"channels\":[\"java\"],\"data\":{\"alert\":\"from java check\"},\"expiration_interval\":3600}"))
        .build();
    HttpResponse<String> pushed = http.send(push, HttpResponse.BodyHandlers.ofString());
    check(pushed.statusCode() == 201, "push accepted: " + pushed.body());
    String notificationId = field(pushed.body(), "objectId");

    GenericCommand data = received.poll(20, TimeUnit.SECONDS);
    check(data != null && data.getCmd() == CommandType.data, "data, got " + data);
    check(!data.hasPeerId() && !data.hasService(), "no peerId, no service");
    check(data.getDataMessage().getIdsCount() == 1 && data.getDataMessage().getIds(0).equals(notificationId), "the notification id");
    String payload = data.getDataMessage().getMsg(0).getData();
    check(payload.contains("\"alert\":\"from java check\"") && payload.contains("\"_channel\":\"java\"") && payload.contains("\"_expiration_time\":\""), "payload " + payload);

    GenericCommand ack = GenericCommand.newBuilder().setCmd(CommandType.ack).setInstallationId(installationId)
        .setAckMessage(AckCommand.newBuilder().addAllIds(data.getDataMessage().getIdsList())).build();
    ws.sendBinary(ByteBuffer.wrap(ack.toByteArray()), true).get();

    long deadline = System.currentTimeMillis() + 10_000;
    String record;
    do {
      Thread.sleep(100);
      record = get(base + "/1.1/notifications/" + notificationId, appId, masterKey);
    } while (!record.contains("\"lcSuccesses\":1") && System.currentTimeMillis() < deadline);
    check(record.contains("\"lcSuccesses\":1"), "ack counted: " + record);
    ws.sendClose(WebSocket.NORMAL_CLOSURE, "done").get();
    System.out.println("java push check: route, lc.protobuf2.3, login with systemInfo, loggedin, data parsed, ack counted");
  }
}
