import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * One realistic SDK session against the JSON-RPC API described by SPEC.md, optionally with one
 * seeded fault (see Faults.java). Prints one line per call; never prints secrets or tokens.
 */
public final class Client {
    static String FAULT;
    static Map<String, Object> cfg;
    static HttpClient http;
    static String baseUrl, wsUrl;
    static long nextId = 1;
    static int callNo = 0;
    static boolean anyReached = false;
    static final SecureRandom RNG = new SecureRandom();
    static final String[] REQUEST_INDEX_NAMES = ("btc_usd eth_usd btc_usdc eth_usdc ada_usdc algo_usdc avax_usdc bch_usdc "
        + "bnb_usdc doge_usdc dot_usdc hype_usdc link_usdc ltc_usdc near_usdc paxg_usdc shib_usdc sol_usdc ton_usdc trx_usdc "
        + "trump_usdc uni_usdc xrp_usdc usde_usdc buidl_usdc btcdvol_usdc ethdvol_usdc btc_usdt eth_usdt all").split(" ");

    static boolean F(String name) { return name.equals(FAULT); }

    static final class Unreachable extends RuntimeException {
        Unreachable() { super("unreachable"); }
    }

    // ------------------------------------------------------------------ command line

    public static void main(String[] args) {
        if (args.length == 1 && args[0].equals("--list-faults")) {
            for (Faults.Fault f : Faults.ALL)
                System.out.println(f.name() + "\t" + f.kind() + "\t" + f.sentence() + "\t" + f.wrong());
            System.exit(0);
        }
        String cfgPath = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--fault")) {
                if (i + 1 >= args.length || FAULT != null) usage("--fault needs one NAME");
                FAULT = args[++i];
            } else if (args[i].startsWith("-")) {
                usage("unknown option " + args[i]);
            } else if (cfgPath == null) {
                cfgPath = args[i];
            } else {
                usage("more than one CONFIG");
            }
        }
        if (cfgPath == null) usage("missing CONFIG");
        if (FAULT != null && Faults.find(FAULT) == null) usage("unknown fault " + FAULT + " (see --list-faults)");
        try {
            Object c = Json.parse(Files.readString(Path.of(cfgPath)));
            if (!(c instanceof Map)) throw new IllegalArgumentException("not a JSON object");
            @SuppressWarnings("unchecked") Map<String, Object> m = (Map<String, Object>) c;
            cfg = m;
        } catch (Exception e) {
            usage("cannot read CONFIG " + cfgPath + ": " + e.getMessage());
        }
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        baseUrl = str(cfg, "base_url");
        wsUrl = str(cfg, "ws_url");
        if (FAULT != null) System.out.println("# seeded fault: " + FAULT);
        long t0 = System.currentTimeMillis();
        try {
            session();
        } catch (Unreachable u) {
            System.err.println("the server cannot be reached");
            System.exit(3);
        } catch (Exception e) {
            System.err.println("session aborted: " + e);
            System.exit(1);
        }
        System.out.printf("# session complete: %d calls in %.1f s%n", callNo, (System.currentTimeMillis() - t0) / 1000.0);
        System.exit(0);
    }

    static void usage(String msg) {
        System.err.println("error: " + msg);
        System.err.println("usage: run CONFIG.json [--fault NAME] | run --list-faults");
        System.exit(2);
    }

    // ------------------------------------------------------------------ small helpers

    static Object at(Object o, String... path) {
        for (String k : path) {
            if (!(o instanceof Map)) return null;
            o = ((Map<?, ?>) o).get(k);
        }
        return o;
    }

    static String str(Object o, String... path) {
        Object v = at(o, path);
        return v instanceof String ? (String) v : null;
    }

    static Long lng(Object o, String... path) {
        Object v = at(o, path);
        if (v instanceof Long) return (Long) v;
        if (v instanceof Double && ((Double) v) == Math.rint((Double) v)) return ((Double) v).longValue();
        return null;
    }

    static Map<String, Object> P(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }

    static Object result(Map<String, Object> env) { return env == null ? null : env.get("result"); }

    static boolean have(Object... vals) {
        for (Object v : vals) if (v == null) return false;
        return true;
    }

    static void skip(String method, String why) {
        callNo++;
        System.out.printf("%3d  %-40s %-10s skipped (%s)%n", callNo, method, "-", why);
    }

    static void log(String method, String transport, Map<String, Object> env, String note) {
        callNo++;
        String out;
        if (env == null) out = "error io";
        else if (env.containsKey("error")) {
            Object c = at(env, "error", "code");
            Object m = at(env, "error", "message");
            boolean plain = m instanceof String && ((String) m).matches("[A-Za-z0-9_ .-]{1,48}");
            out = "error " + (c == null ? "?" : c) + (plain ? " " + m : "");
        } else if (env.containsKey("result")) out = "ok";
        else out = "error ?";
        System.out.printf("%3d  %-40s %-10s %s%s%n", callNo, method, transport, out, note == null ? "" : "  [" + note + "]");
    }

    static void sleep(long ms) {
        if (ms <= 0) return;
        try { Thread.sleep(ms); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
    }

    // ------------------------------------------------------------------ crypto

    static String hmacHex(String algo, byte[] key, String msg) {
        try {
            Mac mac = Mac.getInstance(algo);
            mac.init(new SecretKeySpec(key, algo));
            return HexFormat.of().formatHex(mac.doFinal(msg.getBytes(StandardCharsets.UTF_8)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static String sign(String secret, String stringToSign) {
        return hmacHex("HmacSHA256", secret.getBytes(StandardCharsets.UTF_8), stringToSign);
    }

    static String newNonce() {
        byte[] b = new byte[12];
        RNG.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    static byte[] base32(String s) {
        String alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        s = s.replace("=", "").replace(" ", "").toUpperCase(Locale.ROOT);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        int buf = 0, bits = 0;
        for (char c : s.toCharArray()) {
            int v = alpha.indexOf(c);
            if (v < 0) throw new IllegalArgumentException("bad base32");
            buf = (buf << 5) | v;
            bits += 5;
            if (bits >= 8) {
                out.write((buf >> (bits - 8)) & 0xff);
                bits -= 8;
            }
        }
        return out.toByteArray();
    }

    /** RFC 6238 TOTP: SHA-1, 30 s step, 6 digits. */
    static String totp(String secretB32) {
        long counter = System.currentTimeMillis() / 1000 / 30;
        byte[] msg = new byte[8];
        for (int i = 7; i >= 0; i--) { msg[i] = (byte) (counter & 0xff); counter >>= 8; }
        try {
            Mac mac = Mac.getInstance("HmacSHA1");
            mac.init(new SecretKeySpec(base32(secretB32), "HmacSHA1"));
            byte[] h = mac.doFinal(msg);
            int o = h[h.length - 1] & 0x0f;
            int bin = ((h[o] & 0x7f) << 24) | ((h[o + 1] & 0xff) << 16) | ((h[o + 2] & 0xff) << 8) | (h[o + 3] & 0xff);
            return String.format("%06d", bin % 1_000_000);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    // ------------------------------------------------------------------ HTTP transport

    interface Auth {
        String header(String verb, String pathAndQuery, String body);
    }

    static Auth bearer(String token) { return token == null ? null : (v, p, b) -> "Bearer " + token; }

    static Auth basic(String id, String secret) {
        String pair = F("basic_swapped") ? secret + ":" + id : id + ":" + secret;
        return (v, p, b) -> "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8));
    }

    /** SPEC 5.6 signed header; the three flags are seeded faults of one call each. */
    static String lastSignedNonce;

    static Auth signed(String scheme, String id, String secret, boolean tsSeconds, boolean noQuery, boolean emptyBody, boolean reuseNonce) {
        return (verb, pq, body) -> {
            long now = System.currentTimeMillis();
            long ts = tsSeconds ? now / 1000 : now;
            String nonce = reuseNonce && lastSignedNonce != null ? lastSignedNonce : newNonce();
            lastSignedNonce = nonce;
            String uri = noQuery ? pq.split("\\?", 2)[0] : pq;
            String requestData = verb.toUpperCase(Locale.ROOT) + "\n" + uri + "\n" + (emptyBody ? "" : body) + "\n";
            String sig = sign(secret, ts + "\n" + nonce + "\n" + requestData);
            return scheme + " id=" + id + ",ts=" + ts + ",nonce=" + nonce + ",sig=" + sig;
        };
    }

    static String enc(String s) { return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20"); }

    static String query(Map<String, Object> params) {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, Object> e : params.entrySet()) {
            if (b.length() > 0) b.append('&');
            Object v = e.getValue();
            b.append(enc(e.getKey())).append('=').append(enc(v instanceof String ? (String) v : Json.write(v)));
        }
        return b.toString();
    }

    static Map<String, Object> envelope(String method, Map<String, Object> params) {
        Map<String, Object> env = new LinkedHashMap<>();
        env.put("jsonrpc", "2.0");
        env.put("id", nextId++);
        env.put("method", method);
        env.put("params", params);
        return env;
    }

    /** HTTP GET with query parameters. */
    static Map<String, Object> q(String method, Map<String, Object> params, Auth auth, String note) {
        return q("GET", method, params, auth, note);
    }

    static Map<String, Object> q(String verb, String method, Map<String, Object> params, Auth auth, String note) {
        if (baseUrl == null) { skip(method, "no base_url"); return null; }
        String url = baseUrl + "/" + method + (params.isEmpty() ? "" : "?" + query(params));
        return send(verb, url, null, auth, method, verb.equals("GET") ? "http-query" : "http-" + verb.toLowerCase(Locale.ROOT), note);
    }

    /** HTTP GET carrying a JSON-RPC body. */
    static Map<String, Object> b(Map<String, Object> env, Auth auth, String note) {
        String method = String.valueOf(env.get("method"));
        if (baseUrl == null) { skip(method, "no base_url"); return null; }
        return send("GET", baseUrl + "/" + method, Json.write(env), auth, method, "http-body", note);
    }

    static Map<String, Object> b(String method, Map<String, Object> params, Auth auth, String note) {
        return b(envelope(method, params), auth, note);
    }

    static boolean isConnectFailure(Throwable t) {
        for (; t != null; t = t.getCause()) if (t instanceof ConnectException) return true;
        return false;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> send(String verb, String url, String body, Auth auth, String method, String transport, String note) {
        Map<String, Object> env = null;
        try {
            URI uri = URI.create(url);
            String pq = uri.getRawPath() + (uri.getRawQuery() != null ? "?" + uri.getRawQuery() : "");
            HttpRequest.Builder rb = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(15));
            if (auth != null) rb.header("Authorization", auth.header(verb, pq, body == null ? "" : body));
            if (body != null) {
                rb.header("Content-Type", "application/json");
                rb.method(verb, HttpRequest.BodyPublishers.ofString(body));
            } else {
                rb.method(verb, HttpRequest.BodyPublishers.noBody());
            }
            HttpResponse<String> resp = http.send(rb.build(), HttpResponse.BodyHandlers.ofString());
            anyReached = true;
            String text = resp.body();
            try {
                Object o = Json.parse(text);
                if (o instanceof Map && (((Map<?, ?>) o).containsKey("result") || ((Map<?, ?>) o).containsKey("error")))
                    env = (Map<String, Object>) o;
                else if (resp.statusCode() == 200)
                    env = P("result", o);
            } catch (RuntimeException notJson) {
                if (resp.statusCode() == 200) env = P("result", text.trim());
            }
            if (env == null) env = P("error", P("code", "http-" + resp.statusCode()));
        } catch (IOException e) {
            if (!anyReached && isConnectFailure(e)) throw new Unreachable();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        log(method, transport, env, note);
        return env;
    }

    // ------------------------------------------------------------------ WebSocket transport

    static final class Ws implements WebSocket.Listener {
        final String label;
        WebSocket ws;
        final LinkedBlockingQueue<String> inbox = new LinkedBlockingQueue<>();
        StringBuilder partial = new StringBuilder();

        Ws(String label) { this.label = label; }

        static Ws open(String label) {
            Ws w = new Ws(label);
            if (wsUrl == null) return w;
            try {
                w.ws = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5))
                    .buildAsync(URI.create(wsUrl), w).get(10, TimeUnit.SECONDS);
                anyReached = true;
            } catch (Exception e) {
                if (!anyReached && isConnectFailure(e)) throw new Unreachable();
                System.out.println("# " + label + ": WebSocket connection failed: " + e.getClass().getSimpleName());
            }
            return w;
        }

        @Override public void onOpen(WebSocket webSocket) { webSocket.request(1); }

        @Override public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                inbox.add(partial.toString());
                partial = new StringBuilder();
            }
            webSocket.request(1);
            return null;
        }

        @Override public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            inbox.add("\u0000closed");
            return null;
        }

        @Override public void onError(WebSocket webSocket, Throwable error) { inbox.add("\u0000closed"); }

        Map<String, Object> call(String method, Map<String, Object> params, String note) {
            return send(envelope(method, params), note);
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> send(Map<String, Object> env, String note) {
            String method = String.valueOf(env.get("method"));
            if (wsUrl == null) { skip(method, "no ws_url"); return null; }
            Map<String, Object> resp = null;
            if (ws != null) {
                try {
                    ws.sendText(Json.write(env), true).get(10, TimeUnit.SECONDS);
                    String want = String.valueOf(env.get("id"));
                    long deadline = System.currentTimeMillis() + 10_000;
                    while (resp == null) {
                        long left = deadline - System.currentTimeMillis();
                        if (left <= 0) break;
                        String msg = inbox.poll(left, TimeUnit.MILLISECONDS);
                        if (msg == null || msg.startsWith("\u0000")) break;
                        Object o;
                        try { o = Json.parse(msg); } catch (RuntimeException e) { continue; }
                        if (!(o instanceof Map)) continue;
                        Map<String, Object> m = (Map<String, Object>) o;
                        if (m.containsKey("method") && !m.containsKey("id")) continue;  // a notification
                        Object id = m.get("id");
                        if (id == null || String.valueOf(id).equals(want)) resp = m;
                    }
                } catch (Exception e) {
                    resp = null;
                }
            }
            log(method, label, resp, note);
            return resp;
        }

        void close() {
            if (ws == null) return;
            try { ws.sendClose(WebSocket.NORMAL_CLOSURE, "bye").get(5, TimeUnit.SECONDS); } catch (Exception ignored) { }
            ws.abort();
        }
    }

    // ------------------------------------------------------------------ tokens and pacing

    static final class Tok {
        String access, refresh, scope;
        long expiresIn;
        long obtainedAt;
    }

    static Tok tok(Map<String, Object> env) {
        Object r = result(env);
        if (str(r, "access_token") == null) return null;
        Tok t = new Tok();
        t.access = str(r, "access_token");
        t.refresh = str(r, "refresh_token");
        t.scope = str(r, "scope");
        Long e = lng(r, "expires_in");
        t.expiresIn = e == null ? 0 : e;
        t.obtainedAt = System.currentTimeMillis();
        return t;
    }

    static String acc(Tok t) { return t == null ? null : t.access; }
    static String ref(Tok t) { return t == null ? null : t.refresh; }

    static final class Bucket {
        double tokens;
        long last = System.nanoTime();
    }

    static final Map<String, Bucket> buckets = new HashMap<>();

    /** Token bucket for private/get_transaction_log, per the configured rate (SPEC 8: 1 request per second). */
    static void paceTxLog(String token, String account) {
        Object rc = at(cfg, "transaction_log_rate");
        Object psO = at(rc, "per_second"), bO = at(rc, "burst");
        double perSecond = psO instanceof Number ? ((Number) psO).doubleValue() : 1.0;
        if (perSecond <= 0) perSecond = 1.0;
        double burst = bO instanceof Number ? Math.max(1, ((Number) bO).doubleValue()) : 1.0;
        String per = str(rc, "counted_per");
        boolean perToken = "token".equals(per);
        String key = perToken ? "token:" + token : "account:" + account;
        final double cap = burst;
        // counted per token: a fresh token starts with a full bucket; counted per account (or unknown):
        // earlier activity of the account is unknown, so start empty and keep to the sustained rate.
        Bucket bk = buckets.computeIfAbsent(key, k -> { Bucket x = new Bucket(); x.tokens = perToken ? cap : 0; return x; });
        while (true) {
            long now = System.nanoTime();
            bk.tokens = Math.min(burst, bk.tokens + (now - bk.last) / 1e9 * perSecond);
            bk.last = now;
            if (bk.tokens >= 1.0) { bk.tokens -= 1.0; return; }
            sleep((long) Math.ceil((1.0 - bk.tokens) / perSecond * 1000) + 5);
        }
    }

    // ------------------------------------------------------------------ the session

    static final class Account {
        final String name, id, secret, secondFactorParam, totpSecret;

        Account(String name, Object m) {
            this.name = name;
            id = str(m, "client_id");
            secret = str(m, "client_secret");
            secondFactorParam = str(m, "second_factor", "parameter");
            totpSecret = str(m, "second_factor", "totp_secret");
        }

        boolean usable() { return id != null && secret != null; }
    }

    static Map<String, Object> ccParams(Account a, String scope) {
        Map<String, Object> p = P("grant_type", "client_credentials", "client_id", a.id, "client_secret", a.secret);
        if (scope != null) p.put("scope", scope);
        return p;
    }

    /** Adds the second factor when the account has one (SPEC 5.7). */
    static void addSecondFactor(Map<String, Object> p, Account a) {
        if (a.secondFactorParam != null && a.totpSecret != null) p.put(a.secondFactorParam, totp(a.totpSecret));
    }

    static Map<String, Object> walkTxLog(String label, Map<String, Object> filter, Tok tok, String account,
                                         boolean viaBody, int[] pagesOut) {
        if (tok == null) { skip("private/get_transaction_log", "no token for " + label); return null; }
        Object cont = null;
        Map<String, Object> last = null;
        int pages = 0, entries = 0;
        while (pages < 50) {
            Map<String, Object> p = new LinkedHashMap<>(filter);
            if (cont != null) p.put("continuation", cont);
            if (pages == 0 && viaBody && F("translog_count_over")) p.put("count", 251L);
            if (pages == 1 && viaBody && F("translog_continuation_string")) p.put("continuation", String.valueOf(cont));
            paceTxLog(tok.access, account);
            String note = label + " page " + (pages + 1);
            last = viaBody ? b("private/get_transaction_log", p, bearer(tok.access), note)
                           : q("private/get_transaction_log", p, bearer(tok.access), note);
            pages++;
            Object r = result(last);
            if (!(r instanceof Map)) break;
            Object logs = ((Map<?, ?>) r).get("logs");
            if (logs instanceof List) entries += ((List<?>) logs).size();
            Long c = lng(r, "continuation");
            if (c == null) break;
            cont = c;
        }
        System.out.println("#    " + label + ": " + entries + " entries in " + pages + " page(s)");
        if (pagesOut != null) pagesOut[0] = pages;
        return last;
    }

    static boolean endOfPages(Object c) {
        return !(c instanceof String) || ((String) c).isEmpty() || c.equals("none");
    }

    @SuppressWarnings("unchecked")
    static void session() throws Exception {
        String cur = str(cfg, "currency");
        String inst = str(cfg, "instrument_name");
        String scheme = str(cfg, "signature_scheme");
        String daUrl = str(cfg, "direct_access_url"), daKey = str(cfg, "direct_access_key");
        Long subId = lng(cfg, "subaccount_id"), tfSubId = lng(cfg, "two_factor_subaccount_id"), memberId = lng(cfg, "member_id");
        Account main = new Account("main", at(cfg, "accounts", "main"));
        Account sub = new Account("sub", at(cfg, "accounts", "sub"));
        Account tfa = new Account("two_factor", at(cfg, "accounts", "two_factor"));
        String kwParam = str(cfg, "transaction_log_keyword_param");
        String forkRt = str(cfg, "fork_token_params", "refresh_token"), forkName = str(cfg, "fork_token_params", "session_name");
        List<String> positions = new ArrayList<>();
        if (at(cfg, "positions") instanceof List) for (Object o : (List<Object>) at(cfg, "positions")) if (o instanceof String) positions.add((String) o);
        Object rc = at(cfg, "transaction_log_rate");
        int burst = at(rc, "burst") instanceof Number ? ((Number) at(rc, "burst")).intValue() : 1;
        long now = System.currentTimeMillis();

        // ---- 4.14, 4.10, 4.9: public market data over the three transports
        Double markPrice = null;
        if (inst != null) {
            Map<String, Object> r = q("public/get_book_summary_by_instrument", P(F("book_summary_param_name") ? "instrument" : "instrument_name", inst), null, null);
            Object res = result(r);
            if (res instanceof List && !((List<?>) res).isEmpty() && at(((List<?>) res).get(0), "mark_price") instanceof Number)
                markPrice = ((Number) at(((List<?>) res).get(0), "mark_price")).doubleValue();
        } else skip("public/get_book_summary_by_instrument", "no instrument_name");

        if (cur != null) {
            Map<String, Object> env = envelope("public/get_historical_volatility", P("currency", F("histvol_currency_steth") ? "STETH" : cur));
            if (F("jsonrpc_number")) env.put("jsonrpc", 2.0);
            b(env, null, null);
        } else skip("public/get_historical_volatility", "no currency");

        Ws pub = Ws.open("ws#0");
        {
            Map<String, Object> env = envelope("public/get_currencies", F("get_currencies_with_params") && cur != null ? P("currency", cur) : P());
            if (F("params_missing")) env.remove("params");
            if (F("id_string")) env.put("id", String.valueOf(env.get("id")));
            pub.send(env, null);
        }
        pub.close();

        // ---- 4.1 client_credentials over HTTP: main's connection-scoped token A
        Tok A = null;
        if (main.usable()) {
            Map<String, Object> p = ccParams(main, null);
            if (F("cc_missing_secret")) p.remove("client_secret");
            if (F("grant_type_typo")) p.put("grant_type", "client_credential");
            A = tok(q("public/auth", p, null, "main, client_credentials"));
        } else skip("public/auth", "no main account");

        // a short-lived token (scope expires:2), refreshed near the end of the session
        Tok E = main.usable() ? tok(q("public/auth", ccParams(main, "expires:2"), null, "main, short-lived")) : null;
        if (E != null) q("private/get_trigger_order_history", cur != null ? P("currency", cur, "count", 5L) : P("count", 5L), bearer(E.access), "short-lived token");

        // ---- 4.6 get_mmp_status in its variants, bearer over HTTP
        List<Object> triggered = null;
        if (A != null) {
            Map<String, Object> p = P();
            Auth auth = bearer(A.access);
            String verb = "GET";
            if (F("token_in_query")) { p.put("access_token", A.access); auth = null; }
            if (F("private_without_token")) auth = null;
            if (F("bearer_refresh_token")) auth = bearer(A.refresh);
            if (F("http_post")) verb = "POST";
            Object r = result(q(verb, "private/get_mmp_status", p, auth, "all triggered"));
            if (r instanceof List) triggered = (List<Object>) r;

            b("private/get_mmp_status", P("index_name", F("mmp_index_uppercase") ? "BTC_USD" : "btc_usd"), bearer(A.access), null);

            String idx = "btc_usd", group = "";
            if (triggered != null) for (Object e : triggered) {
                String in = str(e, "index_name"), g = str(e, "mmp_group");
                if (g != null && in != null && Arrays.asList(REQUEST_INDEX_NAMES).contains(in)) { idx = in; group = g; break; }
            }
            Map<String, Object> pg = F("mmp_group_without_index") ? P("mmp_group", group) : P("index_name", idx, "mmp_group", group);
            q("private/get_mmp_status", pg, bearer(A.access), "mmp group");
        } else skip("private/get_mmp_status", "no token");

        // ---- 5.5 client_signature over WebSocket: connection-scoped token W on ws#1
        Ws ws1 = Ws.open("ws#1");
        Tok W = null;
        String wsNonce = null;
        if (main.usable()) {
            long ts = System.currentTimeMillis();
            if (F("signature_stale_timestamp")) ts -= 90_000;
            if (F("signature_timestamp_seconds")) ts /= 1000;
            String nonce = F("nonce_missing") ? "" : newNonce();
            String data = "java-sdk";
            String sig = sign(main.secret, ts + "\n" + nonce + "\n" + data);
            Map<String, Object> p = P("grant_type", "client_signature", "client_id", main.id, "timestamp", ts);
            if (!F("nonce_missing")) p.put("nonce", nonce);
            p.put("signature", sig);
            p.put("data", data);
            if (F("signature_sends_secret")) p.put("client_secret", main.secret);
            wsNonce = nonce;
            W = tok(ws1.call("public/auth", p, "main, client_signature"));
        }
        if (W != null) {
            Map<String, Object> env = envelope("private/get_mmp_status", P("index_name", "btc_usd"));
            if (F("ws_token_outside_params")) env.put("access_token", W.access);
            else if (!F("ws_omit_token_connection_scope")) ((Map<String, Object>) env.get("params")).put("access_token", W.access);
            ws1.send(env, null);
        } else skip("private/get_mmp_status", "no WebSocket token");

        // ---- client_signature over HTTP: read-only token R (used for the walks)
        Tok R = null;
        if (main.usable()) {
            long ts = System.currentTimeMillis();
            String nonce = F("nonce_reuse") && wsNonce != null && !wsNonce.isEmpty() ? wsNonce : newNonce();
            // no data: the string to sign still ends with LF after the nonce
            String toSign = F("signature_no_trailing_lf") ? ts + "\n" + nonce : ts + "\n" + nonce + "\n";
            String sig = sign(main.secret, toSign);
            if (F("signature_uppercase_hex")) sig = sig.toUpperCase(Locale.ROOT);
            R = tok(q("public/auth", P("grant_type", "client_signature", "client_id", main.id, "timestamp", ts,
                "nonce", nonce, "signature", sig, "scope", F("scope_invalid_value") ? "account:read trade:readonly" : "account:read trade:read"),
                null, "main, client_signature, read-only"));
        }

        if (A != null) {
            Object blk = F("mmp_block_rfq_string") ? "true" : Boolean.TRUE;
            Tok t = F("mmp_block_rfq_scope") && R != null ? R : A;
            b("private/get_mmp_status", P("block_rfq", blk), bearer(t.access), "block_rfq");
        }

        // ---- 5.6 Basic and signed headers
        if (main.usable()) {
            q("private/get_mmp_status", P("index_name", F("mmp_index_response_only") ? "eth_btc" : "all"), basic(main.id, main.secret), "Basic header");
            if (scheme != null) {
                Map<String, Object> p = P();
                if (cur != null) p.put("currency", cur);
                p.put("count", F("trigger_count_over") ? 1001L : 10L);
                q("private/get_trigger_order_history", p,
                    signed(scheme, main.id, main.secret, F("hmac_ts_seconds"), F("hmac_uri_no_query"), false, false), "signed header");
                b("private/get_mmp_status", P("index_name", "btc_usd", "block_rfq", false),
                    signed(scheme, main.id, main.secret, false, false, F("hmac_body_unsigned"), F("hmac_nonce_reuse")), "signed header");
            } else skip("private/get_trigger_order_history", "no signature_scheme");
        }

        // ---- a session-scoped token S on ws#2; later requests omit the token
        Ws ws2 = Ws.open("ws#2");
        Tok S = null, S2 = null;
        String sessScope = "session:java-sdk account:read_write trade:read_write wallet:read";
        if (main.usable() && wsUrl != null) S = tok(ws2.call("public/auth", ccParams(main, sessScope), "main, session"));
        else if (main.usable()) S = tok(q("public/auth", ccParams(main, sessScope), null, "main, session (no ws_url)"));
        if (S != null && wsUrl != null) {
            Object cont = null;
            int pages = 0, entries = 0;
            while (pages < 60) {
                Map<String, Object> p = P();
                if (cur != null) p.put("currency", cur);
                p.put("count", 20L);
                if (cont != null) p.put("continuation", F("trigger_continuation_array") && pages == 1 ? List.of(cont) : cont);
                Map<String, Object> r = ws2.call("private/get_trigger_order_history", p, "session remembered, page " + (pages + 1));
                pages++;
                Object res = result(r);
                if (!(res instanceof Map)) break;
                Object es = ((Map<?, ?>) res).get("entries");
                if (es instanceof List) entries += ((List<?>) es).size();
                cont = ((Map<?, ?>) res).get("continuation");
                if (endOfPages(cont) || (es instanceof List && ((List<?>) es).isEmpty())) break;
            }
            System.out.println("#    trigger order history (ws, session): " + entries + " entries in " + pages + " page(s)");
            // 5.3: refresh of the session-scoped token; the session stays the same
            String rt = F("refresh_with_access_token") ? S.access : S.refresh;
            S2 = tok(ws2.call("public/auth", P("grant_type", "refresh_token", "refresh_token", rt), "session refresh"));
            Map<String, Object> env = envelope("private/get_mmp_status", P());
            if (F("jsonrpc_version_2")) env.put("jsonrpc", "2");
            ws2.send(env, "session remembered");
        }
        Tok sess = S2 != null ? S2 : S;

        // ---- 4.3 fork of the session token, used on a new WebSocket connection
        if (forkRt != null && forkName != null && sess != null) {
            String rt = F("fork_connection_token") && A != null ? A.refresh : sess.refresh;
            Tok K = tok(q("public/fork_token", P(forkRt, rt, forkName, "java-sdk-fork"), null, "fork"));
            if (K != null) {
                Ws ws3 = Ws.open("ws#3");
                Map<String, Object> p = P();
                if (cur != null) p.put("currency", cur);
                p.put("count", 25L);
                if (!F("ws_omit_token_other_connection")) p.put("access_token", K.access);
                paceTxLog(K.access, "main");
                ws3.call("private/get_transaction_log", p, "forked session");
                ws3.close();
            }
        } else skip("public/fork_token", "no fork_token_params or session token");

        // ---- 4.2 exchange for the subaccount
        Tok X = null;
        if (sess != null && subId != null) {
            X = tok(b("public/exchange_token", P("refresh_token", sess.refresh, "subject_id", subId,
                "scope", F("exchange_scope_exceeds") ? "session:java-sdk-sub wallet:read_write" : "session:java-sdk-sub"), null, "to subaccount"));
            if (X != null) {
                Map<String, Object> p = P();
                if (cur != null) p.put("currency", cur);
                p.put("count", 25L);
                paceTxLog(X.access, "sub");
                q("private/get_transaction_log", p, bearer(X.access), "exchanged token");
            }
        } else skip("public/exchange_token", "no session token or subaccount_id");

        // ---- 5.3 refresh of the connection-scoped token A; the previous one is invalidated
        Tok A2 = null;
        if (A != null) {
            A2 = tok(q("public/auth", P("grant_type", "refresh_token", "refresh_token", A.refresh), null, "connection refresh"));
            Tok use = F("old_token_after_refresh") || A2 == null ? A : A2;
            q("private/get_mmp_status", P(), bearer(use.access), "refreshed token");
        }
        Tok admin = A2 != null ? A2 : A;

        // ---- 4.8 transaction log walks with the read-only token, kept to the configured rate
        if (R != null) {
            Map<String, Object> f = P();
            if (cur != null) f.put("currency", cur);
            f.put("count", 100L);
            walkTxLog("transaction log", f, R, "main", true, null);

            Map<String, Object> ft = P();
            if (cur != null) ft.put("currency", cur);
            long end = now, start = now - 3L * 365 * 24 * 3600 * 1000;
            ft.put("start_timestamp", F("translog_timestamp_seconds") ? start / 1000 : start);
            ft.put("end_timestamp", end);
            ft.put("count", 100L);
            walkTxLog("transaction log, time range", ft, R, "main", false, null);

            if (subId != null) {
                Map<String, Object> fs = P();
                if (cur != null) fs.put("currency", F("translog_currency_lower") ? cur.toLowerCase(Locale.ROOT) : cur);
                fs.put("subaccount_id", subId);
                fs.put("count", 100L);
                walkTxLog("transaction log, subaccount", fs, R, "main", false, null);
            } else skip("private/get_transaction_log", "no subaccount_id");

            if (kwParam != null) {
                Map<String, Object> fk = P();
                if (cur != null) fk.put("currency", cur);
                fk.put(kwParam, F("translog_keyword_unknown") ? "trades" : "trade");
                fk.put("count", 100L);
                walkTxLog("transaction log, keyword", fk, R, "main", false, null);
                if (F("translog_rate_exceeded")) {
                    for (int i = 0; i < burst + 2; i++)
                        q("private/get_transaction_log", fk, bearer(R.access), "unpaced poll " + (i + 1));
                }
            } else skip("private/get_transaction_log", "no transaction_log_keyword_param");

            // 4.7 trigger order history walk filtered by instrument
            Object cont = null;
            int pages = 0, entries = 0;
            while (pages < 60) {
                Map<String, Object> p = P();
                if (cur != null) p.put("currency", cur);
                if (inst != null) p.put("instrument_name", inst);
                p.put("count", 20L);
                if (cont != null) p.put("continuation", cont);
                Object res = result(q("private/get_trigger_order_history", p, bearer(R.access), "by instrument, page " + (pages + 1)));
                pages++;
                if (!(res instanceof Map)) break;
                Object es = ((Map<?, ?>) res).get("entries");
                if (es instanceof List) entries += ((List<?>) es).size();
                cont = ((Map<?, ?>) res).get("continuation");
                if (endOfPages(cont) || (es instanceof List && ((List<?>) es).isEmpty())) break;
            }
            System.out.println("#    trigger order history (http, instrument): " + entries + " entries in " + pages + " page(s)");
        } else skip("private/get_transaction_log", "no read-only token");

        // ---- 4.5 toggle_subaccount_login: main on subaccount_id (disable, then enable)
        if (admin != null && subId != null) {
            Tok U = sub.usable() ? tok(q("public/auth", ccParams(sub, "session:java-sdk-subuser"), null, "sub, session")) : null;
            if (U != null) q("private/get_trigger_order_history", cur != null ? P("currency", cur) : P(), bearer(U.access), "subaccount login");
            Map<String, Object> p = P("sid", F("toggle_sid_string") ? String.valueOf(subId) : subId, "state", F("toggle_state_typo") ? "disabled" : "disable");
            addSecondFactor(p, main);
            Tok t = F("toggle_read_scope") && R != null ? R : admin;
            b("private/toggle_subaccount_login", p, bearer(t.access), "disable");
            Map<String, Object> pe = P("sid", subId, "state", "enable");
            addSecondFactor(pe, main);
            b("private/toggle_subaccount_login", pe, bearer(admin.access), "enable");
            // the earlier session of the subaccount has ended: log in again
            Tok U2 = sub.usable() ? tok(q("public/auth", ccParams(sub, "session:java-sdk-subuser"), null, "sub, session again")) : null;
            Tok use = F("use_sub_token_after_disable") && U != null ? U : U2;
            if (use != null) q("private/get_trigger_order_history", cur != null ? P("currency", cur) : P(), bearer(use.access), "subaccount login again");
        } else skip("private/toggle_subaccount_login", "no token or subaccount_id");

        // two_factor on two_factor_subaccount_id, with its second factor, over WebSocket
        if (tfa.usable() && tfSubId != null) {
            Tok T = tok(q("public/auth", ccParams(tfa, null), null, "two_factor, client_credentials"));
            if (T != null) {
                Ws ws4 = Ws.open("ws#4");
                Map<String, Object> p = P("sid", tfSubId, "state", "disable");
                if (!F("toggle_2fa_missing")) addSecondFactor(p, tfa);
                p.put("access_token", T.access);
                ws4.call("private/toggle_subaccount_login", p, "disable, 2FA");
                Map<String, Object> pe = P("sid", tfSubId, "state", "enable");
                addSecondFactor(pe, tfa);
                pe.put("access_token", T.access);
                ws4.call("private/toggle_subaccount_login", pe, "enable, 2FA");
                ws4.close();
            }
        } else skip("private/toggle_subaccount_login", "no two_factor account or two_factor_subaccount_id");

        // ---- 4.11 delete_member
        if (admin != null && memberId != null) {
            Tok t = F("delete_member_sub_token") && X != null ? X : admin;
            Map<String, Object> r = q("private/delete_member", P("member_id", F("delete_member_zero") ? 0L : memberId), bearer(t.access), null);
            String idField = str(cfg, "member_fields", "identifier");
            Object ms = at(result(r), "members");
            if (idField != null && ms instanceof List) {
                List<String> ids = new ArrayList<>();
                for (Object m : (List<?>) ms) ids.add(String.valueOf(at(m, idField)));
                System.out.println("#    members remaining: " + ids);
            }
        } else skip("private/delete_member", "no token or member_id");

        // ---- 4.12 close_position (one), over the client_signature WebSocket
        String closeInst = inst != null && (positions.isEmpty() || positions.contains(inst)) ? inst : (positions.isEmpty() ? null : positions.get(0));
        if (W != null && closeInst != null) {
            Map<String, Object> p = P("instrument_name", closeInst, "type", F("close_position_type_case") ? "Market" : "market");
            if (F("close_position_price_on_market")) p.put("price", markPrice != null ? markPrice : 1.0);
            p.put("access_token", W.access);
            ws1.call("private/close_position", p, null);
        } else skip("private/close_position", "no token or instrument");

        // ---- short-lived token: expired by now, so refresh it first
        if (E != null) {
            long wait = E.obtainedAt + E.expiresIn * 1000 + 300 - System.currentTimeMillis();
            if (wait > 0 && wait < 10_000) sleep(wait);
            Tok E2 = tok(q("public/auth", P("grant_type", "refresh_token", "refresh_token", E.refresh), null, "short-lived refresh"));
            Tok use = F("use_after_expiry") || E2 == null ? E : E2;
            q("private/get_trigger_order_history", cur != null ? P("currency", cur, "count", 5L) : P("count", 5L), bearer(use.access), "after expiry");
        }

        // ---- 4.13 Direct Access lock_portfolio
        if (daUrl != null && daKey != null) {
            String url = F("lock_wrong_base") && baseUrl != null ? baseUrl + "/private/lock_portfolio" : daUrl + "/api/v2/private/lock_portfolio";
            String key = F("lock_main_token") && admin != null ? admin.access : daKey;
            send("GET", url, null, bearer(key), "lock_portfolio", "rest", "Direct Access");
        } else skip("lock_portfolio", "no direct_access_url or key");

        // ---- 4.4 logout at the end (WebSocket only)
        if (W != null) {
            if (F("logout_over_http")) q("private/logout", P(), bearer(W.access), null);
            else ws1.call("private/logout", P("access_token", W.access), null);
            if (F("use_after_logout")) q("private/get_mmp_status", P(), bearer(W.access), "after logout");
        } else skip("private/logout", "no WebSocket token");
        ws1.close();
        ws2.close();
    }
}
