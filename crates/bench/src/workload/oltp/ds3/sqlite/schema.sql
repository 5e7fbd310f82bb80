-- DVD Store 3 tables for SQLite. Dates are ISO text (YYYY-MM-DD) so they sort; money is REAL.
CREATE TABLE storbench_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE categories (category INTEGER PRIMARY KEY, categoryname TEXT NOT NULL);
CREATE TABLE products (
  prod_id INTEGER PRIMARY KEY, category INTEGER NOT NULL, title TEXT NOT NULL, actor TEXT NOT NULL,
  price REAL NOT NULL, special INTEGER, common_prod_id INTEGER NOT NULL, membership_item INTEGER NOT NULL);
CREATE TABLE inventory (prod_id INTEGER PRIMARY KEY, quan_in_stock INTEGER NOT NULL, sales INTEGER NOT NULL);
CREATE TABLE customers (
  customerid INTEGER PRIMARY KEY, firstname TEXT NOT NULL, lastname TEXT NOT NULL, address1 TEXT NOT NULL,
  address2 TEXT, city TEXT NOT NULL, state TEXT, zip TEXT, country TEXT NOT NULL, region INTEGER NOT NULL,
  email TEXT, phone TEXT, creditcardtype INTEGER NOT NULL, creditcard TEXT NOT NULL,
  creditcardexpiration TEXT NOT NULL, username TEXT NOT NULL, password TEXT NOT NULL, age INTEGER,
  income INTEGER, gender TEXT);
CREATE TABLE orders (
  orderid INTEGER PRIMARY KEY, orderdate TEXT NOT NULL, customerid INTEGER, netamount REAL NOT NULL,
  tax REAL NOT NULL, totalamount REAL NOT NULL);
CREATE TABLE orderlines (
  orderlineid INTEGER NOT NULL, orderid INTEGER NOT NULL, prod_id INTEGER NOT NULL, quantity INTEGER NOT NULL,
  orderdate TEXT NOT NULL);
CREATE TABLE cust_hist (customerid INTEGER NOT NULL, orderid INTEGER NOT NULL, prod_id INTEGER NOT NULL);
CREATE TABLE reorder (
  prod_id INTEGER NOT NULL, date_low TEXT NOT NULL, quan_low INTEGER NOT NULL, date_reordered TEXT,
  quan_reordered INTEGER, date_expected TEXT);
