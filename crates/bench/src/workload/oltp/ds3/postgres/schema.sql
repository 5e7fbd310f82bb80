-- storbench's DS3 schema for PostgreSQL: the DS2 tables, REORDER and storbench's own record.
-- Primary keys, unique constraints and indexes come after the bulk load (indexes.sql).
CREATE TABLE categories (
    category     serial NOT NULL,
    categoryname varchar(50) NOT NULL
);

CREATE TABLE products (
    prod_id         serial NOT NULL,
    category        smallint NOT NULL,
    title           text NOT NULL,
    actor           text NOT NULL,
    price           numeric NOT NULL,
    special         smallint,
    common_prod_id  integer NOT NULL,
    membership_item smallint NOT NULL
);

-- Stock changes on every purchase: leave room on each page for HOT updates.
CREATE TABLE inventory (
    prod_id       integer NOT NULL,
    quan_in_stock integer NOT NULL,
    sales         integer NOT NULL
) WITH (fillfactor = 85);

CREATE TABLE customers (
    customerid           serial NOT NULL,
    firstname            varchar(50) NOT NULL,
    lastname             varchar(50) NOT NULL,
    address1             varchar(50) NOT NULL,
    address2             varchar(50),
    city                 varchar(50) NOT NULL,
    state                varchar(50),
    zip                  varchar(9),
    country              varchar(50) NOT NULL,
    region               smallint NOT NULL,
    email                varchar(50),
    phone                varchar(50),
    creditcardtype       integer NOT NULL,
    creditcard           varchar(50) NOT NULL,
    creditcardexpiration varchar(50) NOT NULL,
    username             varchar(50) NOT NULL,
    password             varchar(50) NOT NULL,
    age                  smallint,
    income               integer,
    gender               varchar(1)
);

CREATE TABLE orders (
    orderid     serial NOT NULL,
    orderdate   date NOT NULL,
    customerid  integer,
    netamount   numeric NOT NULL,
    tax         numeric NOT NULL,
    totalamount numeric NOT NULL
);

CREATE TABLE orderlines (
    orderlineid smallint NOT NULL,
    orderid     integer NOT NULL,
    prod_id     integer NOT NULL,
    quantity    smallint NOT NULL,
    orderdate   date NOT NULL
);

CREATE TABLE cust_hist (
    customerid integer NOT NULL,
    orderid    integer NOT NULL,
    prod_id    integer NOT NULL
);

CREATE TABLE reorder (
    prod_id        integer NOT NULL,
    date_low       date NOT NULL,
    quan_low       integer NOT NULL,
    date_reordered date,
    quan_reordered integer,
    date_expected  date
);
CREATE INDEX ix_reorder_prodid ON reorder (prod_id);

-- What storbench loaded here: one row, written as the load starts (state 'loading') and
-- completed at its end (state 'ready', with the rows loaded). The marker proves the load is
-- storbench's (its pristine copy's comment carries it too); the objects are every one that
-- storbench's load created here, by catalogue and OID (see claim.rs).
CREATE TABLE storbench_meta (
    marker         text NOT NULL,
    object_classes oid[] NOT NULL DEFAULT '{}',
    object_ids     oid[] NOT NULL DEFAULT '{}',
    db_size   text NOT NULL,
    seed      text NOT NULL,
    ds2       boolean NOT NULL,
    state     text NOT NULL,
    customers bigint NOT NULL DEFAULT 0,
    products  bigint NOT NULL DEFAULT 0,
    loaded_at timestamptz NOT NULL DEFAULT now()
);
