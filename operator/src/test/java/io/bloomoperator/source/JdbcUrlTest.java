package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JdbcUrlTest {

  @Test
  void parsesOneHostPortDatabaseAndAllowedParameters() {
    JdbcUrl.Parsed pg =
        JdbcUrl.parse(
            "jdbc:postgresql://DB.example:6543/shop?sslmode=verify-full&currentSchema=app,public");
    assertThat(pg.driver()).isEqualTo(JdbcDriver.POSTGRESQL);
    assertThat(pg.host()).isEqualTo("db.example");
    assertThat(pg.port()).isEqualTo(6543);
    assertThat(pg.database()).isEqualTo("shop");
    assertThat(pg.parameters())
        .isEqualTo(Map.of("sslmode", "verify-full", "currentSchema", "app,public"));
    assertThat(pg.url())
        .isEqualTo(
            "jdbc:postgresql://db.example:6543/shop?currentSchema=app,public&sslmode=verify-full");

    JdbcUrl.Parsed mysql = JdbcUrl.parse("jdbc:mysql://10.0.0.7/shop?sslMode=VERIFY_IDENTITY");
    assertThat(mysql.driver()).isEqualTo(JdbcDriver.MYSQL);
    assertThat(mysql.server()).isEqualTo("10.0.0.7:3306");

    JdbcUrl.Parsed maria = JdbcUrl.parse("JDBC:MariaDB://[::1]:3307");
    assertThat(maria.driver()).isEqualTo(JdbcDriver.MARIADB);
    assertThat(maria.host()).isEqualTo("::1");
    assertThat(maria.port()).isEqualTo(3307);
    assertThat(maria.database()).isNull();
    assertThat(maria.url()).isEqualTo("jdbc:mariadb://[::1]:3307/");
    assertThat(JdbcUrl.parse("jdbc:postgresql://db/").port()).isEqualTo(5432);
  }

  @Test
  void refusesEveryOtherSchemeAndForm() {
    for (String url :
        List.of(
            "jdbc:oracle:thin:@db:1521/x",
            "jdbc:postgresql:shop",
            "jdbc:postgresql:/shop",
            "jdbc:postgresql:///shop",
            "jdbc:postgresql://db1,db2/shop",
            "jdbc:postgresql://db1:5432,db2:5432/shop?targetServerType=primary",
            "jdbc:mysql://db1,db2/shop",
            "jdbc:mysql://address=(host=db)(port=3306)(allowLoadLocalInfile=true)/shop",
            "jdbc:mysql://(host=db,port=3306,allowLoadLocalInfile=true)/shop",
            "jdbc:mysql://[(host=db,allowLoadLocalInfile=true)]/shop",
            "jdbc:mysql+srv://db.example/shop",
            "jdbc:mysql:loadbalance://db1,db2/shop",
            "jdbc:mysql:replication://db1,db2/shop",
            "jdbc:mariadb:loadbalance://db1,db2/shop",
            "jdbc:mariadb:replication://db1,db2/shop",
            "jdbc:mariadb:sequential://db1/shop",
            "jdbc:mariadb:aurora://db1/shop",
            "jdbc:mariadb://address=(host=db)(port=3306)(type=primary)/shop",
            "jdbc:mysql://app:pw@db/shop",
            "jdbc:mariadb://app@db/shop",
            "jdbc:postgresql://db:0/shop",
            "jdbc:postgresql://db:65536/shop",
            "jdbc:postgresql://db:54x/shop",
            "jdbc:postgresql://db%2Fx/shop",
            "jdbc:postgresql://db/sh%6Fp",
            "jdbc:postgresql://db/shop/more",
            "jdbc:postgresql://db/shop#frag",
            "jdbc:postgresql://-db/shop",
            "jdbc:postgresql://[zz::1]/shop",
            "jdbc:mysql://db/shop;allowLoadLocalInfile=true")) {
      assertThatThrownBy(() -> JdbcUrl.parse(url))
          .as(url)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("spec.source.jdbc.url");
    }
    assertThatThrownBy(() -> JdbcUrl.parse("jdbc:mysql://app:pw@db/shop"))
        .hasMessageContaining("credentialsSecret")
        .hasMessageNotContaining("pw");
    assertThatThrownBy(() -> JdbcUrl.parse("jdbc:postgresql://db1,db2/shop"))
        .hasMessageContaining("exactly one host");
  }

  /** Every parameter that would let a URL reach beyond the database, per driver. */
  @Test
  void refusesHostileParametersNamingThem() {
    Map<String, List<String>> hostile =
        Map.of(
            "jdbc:postgresql://db/shop?",
                List.of(
                    "readOnlyMode=ignore",
                    "readOnly=false",
                    "options=-c%20default_transaction_read_only=off",
                    "preferQueryMode=simple",
                    "sslfactory=org.example.Evil",
                    "sslhostnameverifier=org.example.Evil",
                    "sslpasswordcallback=org.example.Evil",
                    "socketFactory=org.example.Evil",
                    "socketFactoryArg=x",
                    "authenticationPluginClassName=org.example.Evil",
                    "sslrootcert=/etc/passwd",
                    "sslkey=/var/run/secrets/kubernetes.io/serviceaccount/token",
                    "sslcert=/etc/passwd",
                    "sslpassword=x",
                    "loggerFile=/tmp/x",
                    "service=x",
                    "jaasApplicationName=x",
                    "gssEncMode=require",
                    "replication=database",
                    "xmlFactoryFactory=org.example.Evil",
                    "user=app",
                    "password=pw",
                    "connectTimeout=100000",
                    "socketTimeout=0",
                    "targetServerType=any"),
            "jdbc:mysql://db/shop?",
                List.of(
                    "allowLoadLocalInfile=true",
                    "allowLoadLocalInfileInPath=/",
                    "allowUrlInLocalInfile=true",
                    "allowMultiQueries=true",
                    "readOnlyPropagatesToServer=false",
                    "autoDeserialize=true",
                    "queryInterceptors=org.example.Evil",
                    "connectionLifecycleInterceptors=x",
                    "exceptionInterceptors=x",
                    "socketFactory=org.example.Evil",
                    "authenticationPlugins=org.example.Evil",
                    "defaultAuthenticationPlugin=x",
                    "disabledAuthenticationPlugins=",
                    "propertiesTransform=org.example.Evil",
                    "clientCertificateKeyStoreUrl=file:/etc/passwd",
                    "trustCertificateKeyStoreUrl=file:/etc/passwd",
                    "ociConfigFile=/etc/passwd",
                    "allowPublicKeyRetrieval=true",
                    "useConfigs=x",
                    "sessionVariables=x",
                    "user=app",
                    "password=pw",
                    "socketTimeout=0"),
            "jdbc:mariadb://db/shop?",
                List.of(
                    "allowLocalInfile=true",
                    "allowlocalinfile=true",
                    "allowMultiQueries=true",
                    "credentialType=ENV",
                    "pwdKey=HOME",
                    "userKey=USER",
                    "credentialType=PROPERTY",
                    "restrictedAuth=mysql_clear_password",
                    "socketFactory=org.example.Evil",
                    "serverSslCert=/etc/passwd",
                    "keyStore=/etc/passwd",
                    "trustStore=/etc/passwd",
                    "initSql=DELETE%20FROM%20t",
                    "sessionVariables=x",
                    "transactionReplay=true",
                    "localSocket=/tmp/x",
                    "pipe=x",
                    "allowPublicKeyRetrieval=true",
                    "rewriteBatchedStatements=true",
                    "user=app",
                    "password=pw",
                    "socketTimeout=0"));
    hostile.forEach(
        (prefix, parameters) -> {
          for (String parameter : parameters) {
            String name = parameter.substring(0, parameter.indexOf('='));
            assertThatThrownBy(() -> JdbcUrl.parse(prefix + parameter))
                .as(prefix + parameter)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("parameter " + name + " is not allowed");
          }
        });
  }

  @Test
  void allowedParametersMustHaveTheirShapeOnceAndNoEncoding() {
    for (String url :
        List.of(
            "jdbc:postgresql://db/shop?sslmode=verify-full&sslmode=disable",
            "jdbc:postgresql://db/shop?sslmode=nope",
            "jdbc:postgresql://db/shop?sslmode",
            "jdbc:postgresql://db/shop?sslmode=",
            "jdbc:postgresql://db/shop?ApplicationName=a%26readOnlyMode%3Dignore",
            "jdbc:postgresql://db/shop?currentSchema=public;drop",
            "jdbc:postgresql://db/shop?&sslmode=require",
            "jdbc:postgresql://db/shop?ssl%6Dode=require",
            "jdbc:postgresql://db/shop?SSLMODE=require",
            "jdbc:mysql://db/shop?sslMode=VERIFY_IDENTITY&allowLoadLocalInfile=true",
            "jdbc:mysql://db/shop?characterEncoding=utf8&characterEncoding=latin1",
            "jdbc:mariadb://db/shop?sslMode=verify-full\n&allowLocalInfile=true")) {
      assertThatThrownBy(() -> JdbcUrl.parse(url))
          .as(url)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void picksTheDriverByScheme() {
    assertThat(JdbcDriver.forUrl("jdbc:postgresql://db/x")).isEqualTo(JdbcDriver.POSTGRESQL);
    assertThat(JdbcDriver.forUrl("jdbc:mysql://db/x")).isEqualTo(JdbcDriver.MYSQL);
    assertThat(JdbcDriver.forUrl("JDBC:MariaDB://db/x")).isEqualTo(JdbcDriver.MARIADB);
    assertThatThrownBy(() -> JdbcDriver.forUrl("jdbc:oracle:thin:@db:1521/x"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * The safety settings go to the driver as properties; the URL cannot carry a competing value (the
   * allowlist above), so neither driver precedence rule can undo them.
   */
  @Test
  void forcesLocalFilesMultiStatementsAndPluginsOffInTheProperties() {
    var timeouts = java.time.Duration.ofSeconds(30);
    var mysql =
        JdbcDriver.MYSQL.properties(
            timeouts, timeouts, JdbcUrl.parse("jdbc:mysql://db"), 1 << 20, "token");
    assertThat(mysql)
        .containsEntry("allowLoadLocalInfile", "false")
        .containsEntry("allowUrlInLocalInfile", "false")
        .containsEntry("allowMultiQueries", "false")
        .containsEntry("readOnlyPropagatesToServer", "true")
        .containsEntry("socketFactory", GuardedMySqlSocketFactory.class.getName())
        .containsEntry("maxAllowedPacket", Integer.toString(1 << 20));
    assertThat(mysql.getProperty("disabledAuthenticationPlugins"))
        .contains("mysql_clear_password", "authentication_oci_client");
    var maria =
        JdbcDriver.MARIADB.properties(
            timeouts, timeouts, JdbcUrl.parse("jdbc:mariadb://db"), 1 << 20, "token");
    assertThat(maria)
        .containsEntry("allowLocalInfile", "false")
        .containsEntry("allowMultiQueries", "false")
        .containsEntry("socketFactory", GuardedSocketFactory.class.getName())
        .doesNotContainKey("credentialType");
    assertThat(maria.getProperty("restrictedAuth")).doesNotContain("clear", "dialog", "gssapi");
    var pg =
        JdbcDriver.POSTGRESQL.properties(
            timeouts,
            timeouts,
            JdbcUrl.parse("jdbc:postgresql://db/x?sslmode=verify-ca"),
            1 << 20,
            "token");
    assertThat(pg)
        .containsEntry("readOnlyMode", "always")
        .containsEntry("preferQueryMode", "extended")
        .containsEntry("sslfactory", "org.postgresql.ssl.DefaultJavaSSLFactory")
        .containsEntry("password", "")
        .containsEntry("socketFactory", GuardedSocketFactory.class.getName())
        .containsEntry("maxResultBuffer", Integer.toString(1 << 20));
    assertThat(
            JdbcDriver.POSTGRESQL.properties(
                timeouts,
                timeouts,
                JdbcUrl.parse("jdbc:postgresql://db/x?sslmode=require"),
                1 << 20,
                "token"))
        .containsEntry("sslfactory", "org.postgresql.ssl.NonValidatingFactory");
  }
}
