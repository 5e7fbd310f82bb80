-- DS3's tables on InnoDB, MySQL types; only primary keys here, the rest comes after the load
-- (indexes.sql). One statement per `;` at a line end; the third word names the table.
CREATE TABLE categories (
  category TINYINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  categoryname VARCHAR(50) NOT NULL
) ENGINE=InnoDB;
CREATE TABLE products (
  prod_id INT NOT NULL PRIMARY KEY,
  category TINYINT NOT NULL,
  title VARCHAR(50) NOT NULL,
  actor VARCHAR(50) NOT NULL,
  price DECIMAL(12,2) NOT NULL,
  special TINYINT,
  common_prod_id INT NOT NULL,
  membership_item TINYINT NOT NULL
) ENGINE=InnoDB;
CREATE TABLE inventory (
  prod_id INT NOT NULL PRIMARY KEY,
  quan_in_stock INT NOT NULL,
  sales INT NOT NULL
) ENGINE=InnoDB;
CREATE TABLE customers (
  customerid INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  firstname VARCHAR(50) NOT NULL,
  lastname VARCHAR(50) NOT NULL,
  address1 VARCHAR(50) NOT NULL,
  address2 VARCHAR(50),
  city VARCHAR(50) NOT NULL,
  state VARCHAR(50),
  zip INT,
  country VARCHAR(50) NOT NULL,
  region TINYINT NOT NULL,
  email VARCHAR(50),
  phone VARCHAR(50),
  creditcardtype INT NOT NULL,
  creditcard VARCHAR(50) NOT NULL,
  creditcardexpiration VARCHAR(50) NOT NULL,
  username VARCHAR(50) NOT NULL,
  password VARCHAR(50) NOT NULL,
  age TINYINT UNSIGNED,
  income INT,
  gender VARCHAR(1)
) ENGINE=InnoDB;
CREATE TABLE orders (
  orderid INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  orderdate DATE NOT NULL,
  customerid INT,
  netamount DECIMAL(12,2) NOT NULL,
  tax DECIMAL(12,2) NOT NULL,
  totalamount DECIMAL(12,2) NOT NULL
) ENGINE=InnoDB;
CREATE TABLE orderlines (
  orderlineid SMALLINT NOT NULL,
  orderid INT NOT NULL,
  prod_id INT NOT NULL,
  quantity SMALLINT NOT NULL,
  orderdate DATE NOT NULL,
  PRIMARY KEY (orderid, orderlineid)
) ENGINE=InnoDB;
CREATE TABLE cust_hist (
  customerid INT NOT NULL,
  orderid INT NOT NULL,
  prod_id INT NOT NULL
) ENGINE=InnoDB;
CREATE TABLE reorder (
  prod_id INT NOT NULL,
  date_low DATE NOT NULL,
  quan_low INT NOT NULL,
  date_reordered DATE,
  quan_reordered INT,
  date_expected DATE,
  KEY ix_reorder_prodid (prod_id)
) ENGINE=InnoDB;
CREATE TABLE membership (
  customerid INT NOT NULL PRIMARY KEY,
  membershiptype TINYINT NOT NULL,
  expiredate DATE NOT NULL
) ENGINE=InnoDB;
CREATE TABLE reviews (
  review_id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  prod_id INT NOT NULL,
  review_date DATE NOT NULL,
  stars TINYINT NOT NULL,
  customerid INT NOT NULL,
  review_summary VARCHAR(50) NOT NULL,
  review_text VARCHAR(1000)
) ENGINE=InnoDB;
CREATE TABLE reviews_helpfulness (
  review_helpfulness_id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  review_id INT NOT NULL,
  customerid INT NOT NULL,
  helpfulness TINYINT NOT NULL
) ENGINE=InnoDB;
