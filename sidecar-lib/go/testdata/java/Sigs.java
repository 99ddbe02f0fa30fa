import io.bloomoperator.snapshot.*;
import java.security.*; import java.util.*;
public class Sigs {
  static String rec(String alg, String id, String sig) {
    return "{\"algorithm\":\"" + alg + "\",\"keyId\":\"" + id + "\",\"signature\":\"" + sig + "\"}";
  }
  public static void main(String[] a) throws Exception {
    KeyPair kp = null;
    for (int i = 0; i < 100000; i++) {
      KeyPair k = Ed25519Keys.generate();
      if (Ed25519Keys.keyId(k.getPublic()).matches("[1-9][0-9]{15}")) { kp = k; break; }
    }
    String id = Ed25519Keys.keyId(kp.getPublic());
    String ns = "vectors";
    String json = "{\n  \"any\" : \"text ü\"\n}";
    Signature s = Signature.getInstance("Ed25519"); s.initSign(kp.getPrivate());
    s.update(ManifestSignature.signedBytes(ns, json));
    String sig = Base64.getEncoder().encodeToString(s.sign());
    Map<String,String> v = new LinkedHashMap<>();
    v.put("good", rec("Ed25519", id, sig));
    v.put("unpadded", rec("Ed25519", id, sig.replace("=", "")));
    v.put("one pad", rec("Ed25519", id, sig.substring(0, sig.length() - 1)));
    v.put("extra pad", rec("Ed25519", id, sig + "="));
    v.put("newline", rec("Ed25519", id, sig.substring(0, 10) + "\\n" + sig.substring(10)));
    v.put("crlf", rec("Ed25519", id, sig.substring(0, 10) + "\\r\\n" + sig.substring(10)));
    v.put("space", rec("Ed25519", id, sig.substring(0, 10) + " " + sig.substring(10)));
    v.put("url alphabet", rec("Ed25519", id, sig.replace('+', '-').replace('/', '_')));
    v.put("trailing data", rec("Ed25519", id, sig + "AAAA"));
    v.put("keyId upper", rec("Ed25519", id.toUpperCase(), sig));
    v.put("keyId number", "{\"algorithm\":\"Ed25519\",\"keyId\":" + id + ",\"signature\":\"" + sig + "\"}");
    v.put("algorithm lower", rec("ed25519", id, sig));
    v.put("extra field", "{\"x\":[1],\"algorithm\":\"Ed25519\",\"keyId\":\"" + id + "\",\"signature\":\"" + sig + "\"}");
    v.put("missing signature", "{\"algorithm\":\"Ed25519\",\"keyId\":\"" + id + "\"}");
    v.put("null signature", "{\"algorithm\":\"Ed25519\",\"keyId\":\"" + id + "\",\"signature\":null}");
    v.put("trailing json", rec("Ed25519", id, sig) + " {}");
    v.put("trailing space", rec("Ed25519", id, sig) + " \n");
    v.put("null", "null");
    v.put("empty", "");
    v.put("array", "[]");
    v.put("other key id", rec("Ed25519", "0123456789abcdef", sig));
    v.put("flipped", rec("Ed25519", id, (sig.charAt(0) == 'A' ? "B" : "A") + sig.substring(1)));
    v.put("duplicate keyId", "{\"algorithm\":\"Ed25519\",\"keyId\":\"x\",\"keyId\":\"" + id + "\",\"signature\":\"" + sig + "\"}");
    v.put("escaped", rec("Ed25519", id, sig.substring(0, 10) + "\\u0041" + sig.substring(11)));
    TrustedKeys keys = TrustedKeys.of(List.of(kp.getPublic()));
    System.out.println("#pem\t" + Base64.getEncoder().encodeToString(Ed25519Keys.toPem(kp.getPublic()).getBytes("UTF-8")));
    System.out.println("#json\t" + Base64.getEncoder().encodeToString(json.getBytes("UTF-8")));
    for (var e : v.entrySet()) {
      String verdict;
      try { keys.verify(ns, json, e.getValue()); verdict = "ok"; }
      catch (SnapshotRefusedException x) { verdict = x.reason().name(); }
      System.out.println(e.getKey() + "\t" + Base64.getEncoder().encodeToString(e.getValue().getBytes("UTF-8")) + "\t" + verdict);
    }
  }
}
