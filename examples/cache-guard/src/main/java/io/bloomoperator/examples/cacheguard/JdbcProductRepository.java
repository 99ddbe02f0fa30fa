package io.bloomoperator.examples.cacheguard;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;

/** {@link ProductRepository} over a JDBC {@link DataSource}: one primary-key look-up per call. */
public final class JdbcProductRepository implements ProductRepository {

  /** The only statement this service sends to the database. */
  static final String QUERY = "select id, name, price from products where id = ?";

  private final DataSource dataSource;

  /** Uses connections from {@code dataSource} (a pool: a connection is borrowed per look-up). */
  public JdbcProductRepository(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  @Override
  public Optional<Product> findById(long id) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement statement = connection.prepareStatement(QUERY)) {
      statement.setLong(1, id);
      try (ResultSet row = statement.executeQuery()) {
        if (!row.next()) {
          return Optional.empty();
        }
        return Optional.of(
            new Product(row.getLong("id"), row.getString("name"), row.getBigDecimal("price")));
      }
    }
  }
}
