package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class JdbcUrlTest {

  @Test
  void dropsUserInfoAndCredentialParameters() {
    assertThat(JdbcUrl.withoutCredentials(
        "jdbc:postgresql://db:5432/shop?user=app&password=x&sslmode=require&sslpassword=y"))
        .isEqualTo("jdbc:postgresql://db:5432/shop?sslmode=require");
    assertThat(JdbcUrl.withoutCredentials("jdbc:mysql://app:pw@db1:3306,u:p@db2/shop"))
        .isEqualTo("jdbc:mysql://db1:3306,db2/shop");
    assertThat(JdbcUrl.withoutCredentials(
        "jdbc:mysql://address=(host=db)(port=3306)(user=app)(password=pw)/shop?password1=z"))
        .isEqualTo("jdbc:mysql://address=(host=db)(port=3306)/shop");
    assertThat(JdbcUrl.withoutCredentials("jdbc:mariadb://db/shop"))
        .isEqualTo("jdbc:mariadb://db/shop");
  }

  @Test
  void namesTheServer() {
    assertThat(JdbcUrl.server("jdbc:postgresql://u:p@db.example:5432/shop?x=1"))
        .isEqualTo("db.example:5432");
    assertThat(JdbcUrl.server("jdbc:mysql://db1,db2:3307?user=a")).isEqualTo("db1,db2:3307");
    assertThat(JdbcUrl.server("jdbc:postgresql:shop")).isEqualTo("localhost");
  }

  @Test
  void picksTheDriverByScheme() {
    assertThat(JdbcDriver.forUrl("jdbc:postgresql://db/x")).isEqualTo(JdbcDriver.POSTGRESQL);
    assertThat(JdbcDriver.forUrl("jdbc:mysql://db/x")).isEqualTo(JdbcDriver.MYSQL);
    assertThat(JdbcDriver.forUrl("JDBC:MariaDB://db/x")).isEqualTo(JdbcDriver.MARIADB);
    assertThatThrownBy(() -> JdbcDriver.forUrl("jdbc:oracle:thin:@db:1521/x"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
