-- Built after the bulk load, as DS3 does.
CREATE UNIQUE INDEX ix_cust_username ON customers (username);
CREATE UNIQUE INDEX ix_cust_userpass ON customers (username, password);
CREATE INDEX ix_cust_hist_customerid ON cust_hist (customerid);
CREATE INDEX ix_order_custid ON orders (customerid);
CREATE UNIQUE INDEX ix_orderlines_orderid ON orderlines (orderid, orderlineid);
CREATE INDEX ix_prod_category ON products (category);
CREATE INDEX ix_prod_special ON products (special);
CREATE INDEX ix_prod_cat_special ON products (category, special);
CREATE INDEX ix_reorder_prod_id ON reorder (prod_id);
-- Full-text search over titles and actors: an FTS5 index whose content is the products table.
CREATE VIRTUAL TABLE products_fts USING fts5(title, actor, content='products', content_rowid='prod_id');
INSERT INTO products_fts (rowid, title, actor) SELECT prod_id, title, actor FROM products;
-- The restock trigger: stock that falls below 3 is reordered and refilled (2,500 for the hot
-- products, whose id is a multiple of 10,000; 250 for the rest).
CREATE TRIGGER restock AFTER UPDATE OF quan_in_stock ON inventory WHEN NEW.quan_in_stock < 3
BEGIN
  INSERT INTO reorder (prod_id, date_low, quan_low)
    VALUES (NEW.prod_id, date('now'),
            (CASE WHEN NEW.prod_id % 10000 = 0 THEN 2500 ELSE 250 END) - NEW.quan_in_stock);
  UPDATE inventory SET quan_in_stock = CASE WHEN NEW.prod_id % 10000 = 0 THEN 2500 ELSE 250 END
    WHERE prod_id = NEW.prod_id;
END;
