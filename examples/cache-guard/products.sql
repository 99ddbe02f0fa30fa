-- The products table cache-guard serves, with ten products to play with.
--   psql -d shop -f examples/cache-guard/products.sql
create table if not exists products (
  id    bigint primary key,
  name  text not null,
  price numeric(10, 2) not null
);

insert into products (id, name, price) values
  (1, 'Espresso cup', 4.50),
  (2, 'Milk jug', 12.00),
  (3, 'Tamper', 24.90),
  (4, 'Burr grinder', 149.00),
  (5, 'Pour-over cone', 18.00),
  (6, 'Paper filters (100)', 5.20),
  (7, 'Kettle', 59.00),
  (8, 'Scale', 32.50),
  (9, 'Beans, 1 kg', 21.00),
  (10, 'Cleaning tablets', 9.90)
on conflict (id) do nothing;
